import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type BudgetWindow, toNanos } from '../budgets/budget-windows.ts';
import type { Checked } from './check-charges.ts';
import { holdsOf } from './journal-holds.ts';
import type { Plan } from './plan-charges.ts';

const day: BudgetWindow = { id: 'key:k1:day:x', subject: 'key:k1', period: 'day', start: 0, end: 86_400_000, limitNanos: toNanos(1) };
const budget = { windows: [day], inputNanos: 0, outputNanosPerToken: 1, choices: 1, want: 500, min: 1, stepNanos: 1, ownMax: undefined };
const claims = [{ subject: 'key:k1', limit: 2 }];
const plan = (fields: Partial<Plan>): Plan => ({ charges: [], scopes: [], claims: [], budget: undefined, holdMs: 1, promptTokens: 0, ...fields });
const none: Checked = { rates: undefined, slots: undefined, budget: undefined };

describe('holdsOf', () => {
  const cases: { name: string; plan: Plan; checked: Checked; holds: ReturnType<typeof holdsOf> }[] = [
    { name: 'nothing held, nothing journaled', plan: plan({}), checked: none, holds: undefined },
    {
      name: 'a reservation: its windows and what was granted',
      plan: plan({ budget, promptTokens: 12 }),
      checked: { ...none, budget: { ok: true, granted: 420 } },
      holds: { budget: { windows: [day], reservedNanos: 420 }, slots: undefined, promptTokens: 12 },
    },
    {
      name: 'the slots it took',
      plan: plan({ claims }),
      checked: { ...none, slots: { ok: true, inUse: [1] } },
      holds: { budget: undefined, slots: claims, promptTokens: undefined },
    },
    {
      name: 'the prompt estimate alone, for the token buckets',
      plan: plan({ promptTokens: 7 }),
      checked: none,
      holds: { budget: undefined, slots: undefined, promptTokens: 7 },
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(holdsOf(c.plan, c.checked), c.holds));
  }
});

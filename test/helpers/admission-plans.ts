import { type BudgetWindow, toNanos } from '../../src/governance/budgets/budget-windows.ts';
import type { Plan } from '../../src/governance/admit/plan-charges.ts';

/** 2026-11-24 12:00 UTC, and the end of that day: the clock of the admission tests. */
export const NOW = Date.UTC(2026, 10, 24, 12);
export const END = Date.UTC(2026, 10, 25);

/** Key k1's daily budget of 1 USD. */
export const day: BudgetWindow = {
  id: 'key:k1:day:2026-11-24',
  subject: 'key:k1',
  period: 'day',
  start: END - 86_400_000,
  end: END,
  limitNanos: toNanos(1),
};

/**
 * A request of key k1 (project p1) charged to every kind of limit: k1's requests a minute (5),
 * p1's tokens a minute (1000, 420 asked), p1's in-flight slots (2), and k1's daily budget (0.2 USD
 * wanted, 0.1 at least).
 */
export const plan: Plan = {
  charges: [
    { subject: 'key:k1', kind: 'requests', limit: 5, points: 1 },
    { subject: 'project:p1', kind: 'tokens', limit: 1_000, points: 420 },
  ],
  scopes: ['key', 'project'],
  claims: [{ subject: 'project:p1', limit: 2 }],
  budget: {
    windows: [day],
    inputNanos: 0,
    outputNanosPerToken: 0,
    choices: 1,
    want: toNanos(0.2),
    min: toNanos(0.1),
    stepNanos: 1,
    ownMax: undefined,
  },
  holdMs: 60_000,
  promptTokens: 30,
};

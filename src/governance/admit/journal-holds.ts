import type { RequestHolds } from '../../accounting/journal-entries.ts';
import type { Checked } from './check-charges.ts';
import type { Plan } from './plan-charges.ts';

/** What an admitted request holds, as the durable journal keeps it (RequestHolds). */
export function holdsOf(plan: Plan, checked: Checked): RequestHolds | undefined {
  const budget =
    plan.budget && checked.budget?.ok ? { windows: plan.budget.windows, reservedNanos: checked.budget.granted } : undefined;
  const slots = checked.slots?.ok && plan.claims.length > 0 ? plan.claims : undefined;
  const promptTokens = plan.promptTokens > 0 ? plan.promptTokens : undefined;
  if (!budget && !slots && promptTokens === undefined) return undefined;
  return { budget, slots, promptTokens };
}

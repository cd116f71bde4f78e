import type { RateLimitWarning } from '../../admission/admission.ts';
import type { RateOutcome } from '../limits/rate-buckets.ts';
import { type LimitStates, rateLimitHeaders, tighter } from '../limits/rate-limit-headers.ts';
import type { Checked } from './check-charges.ts';
import type { Plan } from './plan-charges.ts';

/** A caller within this share of a per-minute limit gets a rate_limit_warning (reference/accounting-events.txt). */
const WARN_SHARE = 0.1;

/** The limit headers of every response to the request, refusals included: the tighter of key and project per kind. */
export function limitHeaders(plan: Plan, checked: Checked): Record<string, string> {
  const states: LimitStates = {};
  const rates = checked.rates;
  if (rates) {
    for (let i = 0; i < plan.charges.length; i++) {
      const kind = plan.charges[i].kind;
      states[kind] = tighter(states[kind], rates.states[i]);
    }
  }
  const slots = checked.slots;
  if (slots) {
    for (let i = 0; i < plan.claims.length; i++) {
      const limit = plan.claims[i].limit;
      states.concurrency = tighter(states.concurrency, { limit, remaining: Math.max(0, limit - slots.inUse[i]), resetMs: 0 });
    }
  }
  return rateLimitHeaders(states);
}

/** The tightest per-minute limit within 10% of its end, if any (at most one warning per request). */
export function limitWarning(plan: Plan, rates: RateOutcome | undefined): RateLimitWarning | undefined {
  if (!rates) return undefined;
  let best: RateLimitWarning | undefined;
  for (let i = 0; i < plan.charges.length; i++) {
    const s = rates.states[i];
    if (s.remaining > s.limit * WARN_SHARE) continue;
    if (best && s.remaining / s.limit >= best.remaining / best.limit) continue;
    best = { scope: plan.scopes[i], limitType: plan.charges[i].kind, limit: s.limit, remaining: s.remaining, resetMs: s.resetMs };
  }
  return best;
}

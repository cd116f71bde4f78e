import { errors } from '../../errors/catalog.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import type { ReserveOutcome } from '../budgets/budget-book.ts';
import { NANOS_PER_USD } from '../budgets/budget-windows.ts';
import { formatResetDuration, retryAfterHeaders } from '../limits/rate-limit-headers.ts';
import type { Checked } from './check-charges.ts';
import type { Plan } from './plan-charges.ts';

/** Throws the refusal, the budget's first (it does not pass with a retry), with the limit headers. */
export function refuseIfOver(plan: Plan, checked: Checked, headers: Record<string, string>, now: number): void {
  const refusal =
    budgetRefusal(plan, checked, headers, now) ?? rateRefusal(plan, checked, headers) ?? slotRefusal(plan, checked, headers);
  if (refusal) throw refusal;
}

/** 429 insufficient_quota: a budget window has less room than the request's least cost; retry when it resets. */
function budgetRefusal(plan: Plan, checked: Checked, headers: Record<string, string>, now: number): GatewayError | undefined {
  const budget = checked.budget;
  if (!budget || budget.ok || !plan.budget) return undefined;
  return errors.quotaExceeded(quotaMessage(budget, plan.budget.min), {
    ...headers,
    ...retryAfterHeaders(budget.window.end - now),
  });
}

/** 429 rate_limit_exceeded, worded as OpenAI words it: a per-minute limit the request does not fit yet. */
function rateRefusal(plan: Plan, checked: Checked, headers: Record<string, string>): GatewayError | undefined {
  const rates = checked.rates;
  if (!rates || rates.ok) return undefined;
  const charge = plan.charges[rates.refused];
  const state = rates.states[rates.refused];
  const what = charge.kind === 'requests' ? 'requests per min (RPM)' : 'tokens per min (TPM)';
  return errors.rateLimited(
    `Rate limit reached for ${charge.subject.replace(':', ' ')} on ${what}: Limit ${state.limit}, Used ${Math.min(rates.used, state.limit)}, Requested ${charge.points}. Please try again in ${formatResetDuration(rates.retryAfterMs)}.`,
    { ...headers, ...retryAfterHeaders(rates.retryAfterMs) },
  );
}

/** 429 rate_limit_exceeded: every in-flight slot of the key or project is taken. */
function slotRefusal(plan: Plan, checked: Checked, headers: Record<string, string>): GatewayError | undefined {
  const slots = checked.slots;
  if (!slots || slots.ok) return undefined;
  const claim = plan.claims[slots.refused];
  return errors.rateLimited(
    `Too many concurrent requests for ${claim.subject.replace(':', ' ')}: at most ${claim.limit} may be in progress at once. Please try again when one has finished.`,
    { ...headers, ...retryAfterHeaders(1_000) },
  );
}

/**
 * Why a budget refused a request: it is used up, or what it has left is less than the request's
 * least cost (its prompt and one output token per choice), which a smaller request may still fit.
 */
function quotaMessage(refused: Extract<ReserveOutcome, { ok: false }>, minNanos: number): string {
  const w = refused.window;
  const held = refused.reservedNanos > 0 ? `, $${usd(refused.reservedNanos)} held by requests in progress` : '';
  const budget = `the ${w.period === 'day' ? 'daily' : 'monthly'} budget of $${usd(w.limitNanos)} of ${w.subject.replace(':', ' ')}`;
  const leftNanos = w.limitNanos - refused.spentNanos - refused.reservedNanos;
  const state =
    leftNanos > 0
      ? `has $${usd(leftNanos)} left ($${usd(refused.spentNanos)} spent${held}), less than this request's least cost of $${usd(minNanos)} (its prompt and one output token per choice)`
      : `is used up ($${usd(refused.spentNanos)} spent${held})`;
  return `You exceeded your current quota: ${budget} ${state}. It resets at ${new Date(w.end).toISOString()}.`;
}

function usd(nanos: number): string {
  return String(Number((nanos / NANOS_PER_USD).toFixed(6)));
}

import type { AdmissionPreview, PreviewBudget, PreviewLimit } from '../../admission/admission.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { NANOS_PER_USD } from '../budgets/budget-windows.ts';
import type { LimitState } from '../limits/rate-limit-headers.ts';
import type { Checked } from './check-charges.ts';
import { limitHeaders } from './limit-standing.ts';
import type { Plan } from './plan-charges.ts';
import { refuseIfOver } from './refusal.ts';

const MINUTE_MS = 60_000;

/** What the books hold now for a plan, read without charging: the buckets, the slots in use, each window's spend (nano-dollars). */
export interface Standing {
  rates: readonly LimitState[];
  inUse: readonly number[];
  spentNanos: ReadonlyMap<string, number>;
}

/**
 * The request's estimate, whether or not a limit or budget needs it: its prompt's tokens and what
 * a budget would reserve for it at its target's prices (plan-charges.ts requestAsk).
 */
export interface Estimate {
  promptTokens: number;
  reservationNanos: number;
}

/**
 * A dry run's admission: what the plan would take of each limit and budget, and the refusal the
 * admit step would answer with, built by the same code from the standing read instead of a check
 * that charges (a budget's reservations by requests in progress are not in the standing: the
 * refusal is the one the spend alone gives).
 */
export function previewOf(
  plan: Plan,
  tier: string | null,
  standing: Standing,
  estimate: Estimate,
  now: number,
): { preview: AdmissionPreview; refusal: GatewayError | undefined } {
  const limits: PreviewLimit[] = plan.charges.map((charge, i) => {
    const state = standing.rates[i];
    return {
      scope: plan.scopes[i],
      kind: charge.kind,
      limit: state.limit,
      remaining: state.remaining,
      remainingAfter: state.remaining - charge.points,
      resetMs: state.resetMs,
    };
  });
  for (const [i, claim] of plan.claims.entries()) {
    const remaining = Math.max(0, claim.limit - standing.inUse[i]);
    limits.push({
      scope: claim.subject.startsWith('key:') ? 'key' : 'project',
      kind: 'concurrent',
      limit: claim.limit,
      remaining,
      remainingAfter: remaining - 1,
      resetMs: 0,
    });
  }
  const ask = plan.budget;
  const budgets: PreviewBudget[] = (ask?.windows ?? []).map((w) => {
    const spentNanos = standing.spentNanos.get(w.id) ?? 0;
    const reservation = Math.max(0, Math.min(ask?.want ?? 0, w.limitNanos - spentNanos));
    return {
      scope: w.subject.startsWith('key:') ? 'key' : 'project',
      period: w.period,
      limitUsd: w.limitNanos / NANOS_PER_USD,
      spentUsd: spentNanos / NANOS_PER_USD,
      reservationUsd: reservation / NANOS_PER_USD,
      remainingAfterUsd: (w.limitNanos - spentNanos - reservation) / NANOS_PER_USD,
      resetsAt: w.end,
    };
  });
  const preview: AdmissionPreview = {
    tier,
    estimatedInputTokens: estimate.promptTokens,
    reservationUsd: estimate.reservationNanos / NANOS_PER_USD,
    limits,
    budgets,
  };
  return { preview, refusal: refusalOf(plan, checkedOf(plan, standing), now) };
}

/** The standing as the check would have answered it: the first limit or window the request does not fit. */
function checkedOf(plan: Plan, standing: Standing): Checked {
  const checked: Checked = { rates: undefined, slots: undefined, budget: undefined };
  if (plan.charges.length > 0) {
    const states = [...standing.rates];
    const refused = plan.charges.findIndex((c, i) => states[i].remaining < c.points);
    if (refused === -1) checked.rates = { ok: true, states };
    else {
      const charge = plan.charges[refused];
      const short = charge.points - states[refused].remaining;
      const retryAfterMs = Math.ceil((short * MINUTE_MS) / charge.limit);
      checked.rates = { ok: false, refused, used: charge.limit - states[refused].remaining, retryAfterMs, states };
    }
  }
  if (plan.claims.length > 0) {
    const inUse = [...standing.inUse];
    const refused = plan.claims.findIndex((c, i) => inUse[i] >= c.limit);
    checked.slots = refused === -1 ? { ok: true, inUse } : { ok: false, refused, inUse };
  }
  const ask = plan.budget;
  if (ask) {
    const spent = (id: string) => standing.spentNanos.get(id) ?? 0;
    const short = ask.windows.find((w) => w.limitNanos - spent(w.id) < ask.min);
    checked.budget = short
      ? { ok: false, window: short, spentNanos: spent(short.id), reservedNanos: 0 }
      : { ok: true, granted: ask.want };
  }
  return checked;
}

function refusalOf(plan: Plan, checked: Checked, now: number): GatewayError | undefined {
  try {
    refuseIfOver(plan, checked, limitHeaders(plan, checked), now);
    return undefined;
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
}

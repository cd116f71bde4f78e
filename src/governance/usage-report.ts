import type { Caller } from '../admission/admission.ts';
import { budgetWindows, NANOS_PER_USD, windowExhausted } from './budgets/budget-windows.ts';
import type { ConcurrencySlots, SlotClaim } from './limits/concurrency-slots.ts';
import type { RateBuckets, RateCharge } from './limits/rate-buckets.ts';
import type { TierPolicy } from './limits/tier-policy.ts';

/** One per-minute or in-flight limit of a caller, and how much of it is in use now. */
export interface LimitUsage {
  scope: 'key' | 'project';
  kind: 'requests' | 'tokens' | 'concurrent';
  limit: number;
  /** Points out of the bucket now (requests, tokens), or slots taken (concurrent). */
  used: number;
  /** Until the bucket is full again (ms; 0 for concurrent). */
  resetMs: number;
}

/** One budget window of a caller: its limit and what the store holds as spent in it. */
export interface BudgetUsage {
  scope: 'key' | 'project';
  period: 'day' | 'month';
  limitUsd: number;
  spentUsd: number;
  /** Nothing left: the admit step refuses every request of the caller (budget_exhausted). */
  exhausted: boolean;
  /** Epoch ms when the period ends and the window starts again at 0. */
  resetsAt: number;
}

export interface CallerUsage {
  /** The tier whose limits apply (the caller's, else the default); null: none. */
  tier: string | null;
  limits: LimitUsage[];
  budgets: BudgetUsage[];
}

export interface UsageSources {
  tierOf: (caller: Caller) => TierPolicy | undefined;
  rates: RateBuckets;
  slots: ConcurrencySlots;
  /** The spend of each window, as the store holds it (absent: nothing spent). */
  spent: (windowIds: readonly string[]) => Promise<Map<string, number>>;
  now: number;
}

/**
 * What each caller is held to and how much of it is used, read without charging anything: the
 * buckets and slots where admission keeps them (memory or Redis), the spend from the store. The
 * same windows and charges as the admit step builds (admit.ts plan()), so the page shows what a
 * request of that caller would meet. One read of each kind for every caller at once.
 */
export async function usageOf(callers: readonly Caller[], from: UsageSources): Promise<CallerUsage[]> {
  const plans = callers.map((caller) => planOf(caller, from.tierOf(caller), from.now));
  const charges = plans.flatMap((p) => p.charges.map((c) => c.charge));
  const claims = plans.flatMap((p) => p.claims.map((c) => c.claim.subject));
  const windowIds = [...new Set(plans.flatMap((p) => p.windows.map((w) => w.id)))];
  const [states, inUse, spent] = await Promise.all([
    charges.length > 0 ? from.rates.peek(charges, from.now) : [],
    claims.length > 0 ? from.slots.inUse(claims) : [],
    windowIds.length > 0 ? from.spent(windowIds) : new Map<string, number>(),
  ]);
  let charge = 0;
  let claim = 0;
  return plans.map((p) => {
    const limits: LimitUsage[] = [];
    for (const c of p.charges) {
      const state = states[charge++];
      limits.push({
        scope: c.scope,
        kind: c.charge.kind,
        limit: state.limit,
        used: state.limit - state.remaining,
        resetMs: state.resetMs,
      });
    }
    for (const c of p.claims)
      limits.push({ scope: c.scope, kind: 'concurrent', limit: c.claim.limit, used: inUse[claim++], resetMs: 0 });
    const budgets = p.windows.map((w) => {
      const spentUsd = spent.get(w.id) ?? 0;
      return {
        scope: w.subject.startsWith('key:') ? ('key' as const) : ('project' as const),
        period: w.period,
        limitUsd: w.limitNanos / NANOS_PER_USD,
        spentUsd,
        exhausted: windowExhausted(w.limitNanos, spentUsd),
        resetsAt: w.end,
      };
    });
    return { tier: p.tier, limits, budgets };
  });
}

function planOf(caller: Caller, tier: TierPolicy | undefined, now: number) {
  const charges: { scope: 'key' | 'project'; charge: RateCharge }[] = [];
  const claims: { scope: 'key' | 'project'; claim: SlotClaim }[] = [];
  for (const [scope, id, limits] of [
    ['key', caller.keyId, tier?.key],
    ['project', caller.projectId, tier?.project],
  ] as const) {
    if (id === null || !limits) continue;
    const subject = `${scope}:${id}`;
    if (limits.requestsPerMinute !== undefined)
      charges.push({ scope, charge: { subject, kind: 'requests', limit: limits.requestsPerMinute, points: 0 } });
    if (limits.tokensPerMinute !== undefined)
      charges.push({ scope, charge: { subject, kind: 'tokens', limit: limits.tokensPerMinute, points: 0 } });
    if (limits.concurrentRequests !== undefined) claims.push({ scope, claim: { subject, limit: limits.concurrentRequests } });
  }
  const rules = tier && tier.budgets.length > 0 ? [...tier.budgets, ...caller.budgets] : caller.budgets;
  return { tier: tier?.name ?? null, charges, claims, windows: budgetWindows(rules, caller, now) };
}

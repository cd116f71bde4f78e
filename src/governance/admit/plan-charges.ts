import { estimatePromptTokens } from '../../accounting/count-tokens.ts';
import type { AdmissionRequest } from '../../admission/admission.ts';
import { type BudgetAsk, budgetAsk, outputChoices, withUnits } from '../budgets/budget-ask.ts';
import { type BudgetWindow, budgetWindows } from '../budgets/budget-windows.ts';
import type { PriceBook } from '../budgets/request-estimate.ts';
import type { SlotClaim } from '../limits/concurrency-slots.ts';
import type { RateCharge } from '../limits/rate-buckets.ts';
import type { RateLimits, TierPolicy } from '../limits/tier-policy.ts';

/** Reservations and slots outlive their request's deadline by this much before they lapse on their own. */
export const HOLD_MARGIN_MS = 60_000;

/** A request's ask of its budget windows. */
export interface BudgetPlan extends BudgetAsk {
  windows: BudgetWindow[];
}

/** What one request asks of each limit and budget, before any is checked. */
export interface Plan {
  charges: RateCharge[];
  /** Whose each charge is (for the warning). */
  scopes: ('key' | 'project')[];
  claims: SlotClaim[];
  budget: BudgetPlan | undefined;
  /** How long a slot or reservation lives if its request never settles. */
  holdMs: number;
  /** The prompt's estimate, when a limit or budget needed it (else 0: an estimate is at least 3). */
  promptTokens: number;
}

/** What a plan reads besides the request and its tier: set once for the gateway's life. */
export interface PlanSettings {
  prices: Pick<PriceBook, 'of' | 'unitsNanos'>;
  /** limits.reserve_output_tokens: the output reserved for a request without its own limit. */
  reserveOutputTokens: number;
  /** How long a request without a tier deadline may run: the longest surface deadline. */
  defaultHoldMs: number;
}

/**
 * What this request asks of each limit and budget: its key's and project's per-minute charges
 * (a request, and its prompt's estimated tokens), their in-flight slots, and the reservation of
 * every budget window (the tier's and the caller's own). Pure: nothing is charged here.
 */
export function planCharges(req: AdmissionRequest, tier: TierPolicy | undefined, now: number, settings: PlanSettings): Plan {
  const { caller } = req;
  const rules = tier && tier.budgets.length > 0 ? [...tier.budgets, ...caller.budgets] : caller.budgets;
  // A cached answer spends nothing: no budget is asked.
  const windows = rules.length > 0 && !req.cached ? budgetWindows(rules, caller, now) : [];
  const promptTokens = needsTokens(windows, tier, req.cached) ? (req.inputTokens ?? estimatePromptTokens(req.request)) : 0;
  const plan: Plan = {
    charges: [],
    scopes: [],
    claims: [],
    budget: windows.length > 0 ? budgetPlan(req, windows, promptTokens, settings) : undefined,
    holdMs: (tier?.deadlineMs || settings.defaultHoldMs) + HOLD_MARGIN_MS,
    promptTokens,
  };
  if (tier?.limited) {
    const cached = req.cached === true;
    if (caller.keyId !== null) chargeScope(plan, 'key', `key:${caller.keyId}`, tier.key, promptTokens, cached);
    if (caller.projectId !== null)
      chargeScope(plan, 'project', `project:${caller.projectId}`, tier.project, promptTokens, cached);
  }
  return plan;
}

/**
 * The prompt is estimated only when something is charged by its tokens: a budget, or a
 * tokens-per-minute limit (which a cached answer is not charged to).
 */
function needsTokens(windows: readonly BudgetWindow[], tier: TierPolicy | undefined, cached: boolean | undefined): boolean {
  if (cached) return false;
  return windows.length > 0 || tier?.key.tokensPerMinute !== undefined || tier?.project.tokensPerMinute !== undefined;
}

/**
 * One subject's (the key's or the project's) per-minute charges and in-flight claim, added to the
 * plan; a cached answer is charged as a request, not by its tokens.
 */
function chargeScope(
  plan: Plan,
  scope: 'key' | 'project',
  subject: string,
  limits: RateLimits,
  promptTokens: number,
  cached: boolean,
): void {
  if (limits.requestsPerMinute !== undefined) {
    plan.charges.push({ subject, kind: 'requests', limit: limits.requestsPerMinute, points: 1 });
    plan.scopes.push(scope);
  }
  if (limits.tokensPerMinute !== undefined && !cached) {
    plan.charges.push({ subject, kind: 'tokens', limit: limits.tokensPerMinute, points: promptTokens });
    plan.scopes.push(scope);
  }
  if (limits.concurrentRequests !== undefined) plan.claims.push({ subject, limit: limits.concurrentRequests });
}

function budgetPlan(req: AdmissionRequest, windows: BudgetWindow[], promptTokens: number, settings: PlanSettings): BudgetPlan {
  return { windows, ...requestAsk(req, promptTokens, settings) };
}

/**
 * What the request would reserve of a budget, at its target's prices: its prompt, every choice's
 * output allowance, and for a media model priced per unit (dall-e's images, tts-1's characters)
 * what it will bill.
 */
export function requestAsk(req: AdmissionRequest, promptTokens: number, settings: PlanSettings): BudgetAsk {
  const { request, target } = req;
  const ask = budgetAsk(
    request,
    promptTokens,
    settings.prices.of(target.provider, target.model),
    settings.reserveOutputTokens,
    // An embeddings answer is vectors: no output to reserve, nor to need room for.
    req.surface === 'embeddings' ? 0 : outputChoices(request),
  );
  const units = req.units ? settings.prices.unitsNanos(target.provider, target.model, req.units) : 0;
  return withUnits(ask, units);
}

import { rendezvous } from '../providers/key-pool/sticky-hash.ts';
import type { HealthBook } from './health.ts';
import type { Candidate, RoutePlan } from './plan.ts';

export interface OrderOptions {
  /** prompt_cache_key, else user: the same key goes to the same healthy target. */
  stickyKey?: string;
  /** [0, 1): injected by tests. */
  random?: () => number;
}

/**
 * The order a request tries its candidates in. Healthy targets first (breaker closed or probing,
 * not cooling down); the unhealthy ones stay at the end as a last resort, so a request is never
 * refused only because every target failed recently. Among the route's healthy targets:
 * - sticky with a key: the target the key hashes to (rendezvous hashing, weighted: every instance
 *   picks the same one without sharing state, and a target going down moves only its own keys);
 * - weighted: power of two choices, two targets drawn by weight, the lower TTFT average first;
 * - then the rest: ordered routes in the order written, weighted ones by their score.
 * The request's own fallbacks (`models`) follow, in the order given.
 */
export function orderCandidates(plan: RoutePlan, health: HealthBook, options: OrderOptions = {}): Candidate[] {
  const random = options.random ?? Math.random;
  const healthy = plan.primary.filter((c) => health.available(c.key));
  const rest = plan.primary.filter((c) => !health.available(c.key));
  let first: Candidate | undefined;
  if (plan.sticky && options.stickyKey !== undefined && healthy.length > 1) {
    first = rendezvous(
      healthy,
      options.stickyKey,
      (c) => c.key,
      (c) => c.weight,
    );
  } else if (plan.strategy === 'weighted' && healthy.length > 1) {
    first = twoChoices(healthy, health, random);
  }
  let ordered = healthy;
  if (plan.strategy === 'weighted') ordered = [...healthy].sort((a, b) => health.score(a.key) - health.score(b.key));
  if (first) ordered = [first, ...ordered.filter((c) => c !== first)];
  const fallbacksHealthy = plan.fallbacks.filter((c) => health.available(c.key));
  const fallbacksRest = plan.fallbacks.filter((c) => !health.available(c.key));
  return [...ordered, ...fallbacksHealthy, ...rest, ...fallbacksRest];
}

function pickByWeight(candidates: readonly Candidate[], random: () => number): Candidate {
  const total = candidates.reduce((sum, c) => sum + c.weight, 0);
  let at = random() * total;
  for (const c of candidates) {
    at -= c.weight;
    if (at < 0) return c;
  }
  return candidates[candidates.length - 1];
}

function twoChoices(candidates: readonly Candidate[], health: HealthBook, random: () => number): Candidate {
  const a = pickByWeight(candidates, random);
  const b = pickByWeight(
    candidates.filter((c) => c !== a),
    random,
  );
  return health.score(b.key) < health.score(a.key) ? b : a;
}

/**
 * A per-minute limit as a token bucket (for requests, the same thing as GCRA: the bucket written
 * as its debt instead of its level). The bucket holds `limit` points and refills continuously at
 * `limit` per minute, so a caller may burst up to the limit and then go on at the rate: unlike a
 * fixed one-minute window, a burst just before a window's edge cannot be followed by a second
 * whole limit just after it.
 *
 * The state is what the bucket owes, in slices (a point is 60 000 slices, and the bucket pays
 * back `limit` slices a millisecond), so every step is integer arithmetic: the Redis script
 * (redis-rate-buckets.ts) does the same steps in Lua's doubles and gets the same answers, and
 * the state does not depend on the limit (a changed limit applies from the next request).
 * Pure functions: the stores (memory, Redis) only keep `BucketState` per subject.
 */
export interface BucketState {
  /** Slices still owed; 0 is a full bucket. */
  owed: number;
  /** When `owed` was last brought up to date (epoch ms). */
  at: number;
}

/** Slices per point: a point is repaid in 60 000 / limit ms, i.e. `limit` points a minute. */
export const SLICES_PER_POINT = 60_000;

export const FULL: BucketState = { owed: 0, at: 0 };

/** The state at `now`: the debt repaid since `at` (a clock behind `at`, another instance's, repays nothing). */
export function drain(state: BucketState, limit: number, now: number): BucketState {
  const elapsed = Math.max(0, now - state.at);
  // Compared first: elapsed * limit may be past 2^53 after a long idle time.
  if (elapsed >= Math.ceil(state.owed / limit)) return { owed: 0, at: Math.max(now, state.at) };
  return { owed: state.owed - elapsed * limit, at: Math.max(now, state.at) };
}

/** Whether `points` fit now (the state already drained). */
export function fits(state: BucketState, limit: number, points: number): boolean {
  return state.owed + points * SLICES_PER_POINT <= limit * SLICES_PER_POINT;
}

export function take(state: BucketState, points: number): BucketState {
  return { owed: state.owed + points * SLICES_PER_POINT, at: state.at };
}

/** Whole points that could be taken now. */
export function remaining(state: BucketState, limit: number): number {
  return Math.max(0, limit - Math.ceil(state.owed / SLICES_PER_POINT));
}

/** Until the bucket is full again (what the x-ratelimit-reset-* headers say). */
export function untilFull(state: BucketState, limit: number): number {
  return Math.ceil(state.owed / limit);
}

/**
 * Until `points` would fit. A request larger than the whole bucket never fits: the time until
 * the bucket is full is the best a client can be told (its request is refused again then).
 */
export function untilFits(state: BucketState, limit: number, points: number): number {
  if (points > limit) return untilFull(state, limit);
  return Math.max(0, Math.ceil((state.owed - (limit - points) * SLICES_PER_POINT) / limit));
}

/**
 * The charge reconciled with what was really used, at `now`: more used is a debit (the bucket
 * may owe more than it holds, and the caller waits for it), less is a refund. A refund gives back
 * no more of the charge than can still be owed for it (the bucket repays `limit` slices a
 * millisecond since the charge), so a late refund does not hand out points that were repaid.
 */
export function reconcile(state: BucketState, limit: number, charged: number, used: number, chargedAt: number): BucketState {
  if (used >= charged) return { owed: state.owed + (used - charged) * SLICES_PER_POINT, at: state.at };
  const since = Math.max(0, state.at - chargedAt);
  const stillOwed = Math.max(0, charged * SLICES_PER_POINT - since * limit);
  const refund = Math.min((charged - used) * SLICES_PER_POINT, stillOwed, state.owed);
  return { owed: state.owed - refund, at: state.at };
}

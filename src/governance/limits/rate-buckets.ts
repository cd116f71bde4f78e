import type { LimitState } from './rate-limit-headers.ts';
import { type BucketState, drain, FULL, fits, reconcile, remaining, take, untilFits, untilFull } from './token-bucket.ts';

/**
 * One per-minute limit a request is charged to: its key's or its project's requests (GCRA) or
 * tokens (a token bucket charged with the prompt's estimate, reconciled at the end).
 */
export interface RateCharge {
  /** `key:<id>` or `project:<id>`. */
  subject: string;
  kind: 'requests' | 'tokens';
  limit: number;
  points: number;
}

export type RateOutcome =
  | { ok: true; states: LimitState[] }
  /**
   * `refused` is the first charge that did not fit, `used` what its bucket held taken before,
   * `retryAfterMs` until every charge of the request would fit; nothing was charged.
   */
  | { ok: false; refused: number; used: number; retryAfterMs: number; states: LimitState[] };

/** A charge to reconcile with the real usage (tokens). */
export interface RateSettlement {
  charge: RateCharge;
  used: number;
  chargedAt: number;
}

/**
 * Where the buckets live (memory, or Redis for every instance). Hand-written rather than
 * rate-limiter-flexible, which counts points in fixed windows only (its RateLimiterMemory/Redis
 * reset a counter every `duration`; execEvenly spreads one process's calls in time, it does not
 * change what is admitted): there is no GCRA or token bucket in it (v11), and a fixed window lets
 * a caller send twice a limit across a window's edge.
 */
export interface RateBuckets {
  /** Every charge or none (a refused request costs nothing): in Redis, one script, one round trip. */
  consume(charges: readonly RateCharge[], now: number): Promise<RateOutcome> | RateOutcome;
  /** Every reconciliation of a request at once: in Redis, one script. */
  reconcile(settlements: readonly RateSettlement[], now: number): Promise<unknown> | void;
  /** Where each bucket stands now, taking nothing (the console's usage page). */
  peek(charges: readonly RateCharge[], now: number): Promise<LimitState[]> | LimitState[];
}

/** The buckets' states after the check (`after`: what is stored when every charge fits). */
export interface Checked {
  refused: number;
  drained: BucketState[];
  after: BucketState[];
}

/** The all-or-nothing check over stored states, as redis-rate-buckets.ts's script does it step for step. */
export function checkAll(stored: readonly BucketState[], charges: readonly RateCharge[], now: number): Checked {
  const drained = stored.map((s, i) => drain(s, charges[i].limit, now));
  const refused = charges.findIndex((c, i) => !fits(drained[i], c.limit, c.points));
  const after = refused === -1 ? drained.map((s, i) => take(s, charges[i].points)) : drained;
  return { refused, drained, after };
}

/** The headers' view of each bucket and, on a refusal, when the whole request would fit. */
export function outcomeOf(charges: readonly RateCharge[], checked: Checked): RateOutcome {
  const states = checked.after.map((s, i) => stateOf(s, charges[i].limit));
  if (checked.refused === -1) return { ok: true, states };
  const refused = checked.refused;
  const charge = charges[refused];
  const retryAfterMs = Math.max(...checked.drained.map((s, i) => untilFits(s, charges[i].limit, charges[i].points)));
  return { ok: false, refused, used: charge.limit - states[refused].remaining, retryAfterMs, states };
}

export function stateOf(state: BucketState, limit: number): LimitState {
  return { limit, remaining: remaining(state, limit), resetMs: untilFull(state, limit) };
}

/** Buckets past this many are pruned of the full ones (a full bucket is the same as none). */
const PRUNE_AT = 4_096;

/** The buckets of one process: a Map kept small by pruning the full ones (callers are authenticated keys and projects). */
export class MemoryRateBuckets implements RateBuckets {
  /** Each with the limit it was last charged at, for pruning. */
  private readonly buckets = new Map<string, { state: BucketState; limit: number }>();

  consume(charges: readonly RateCharge[], now: number): RateOutcome {
    const checked = checkAll(
      charges.map((c) => this.buckets.get(bucketName(c))?.state ?? FULL),
      charges,
      now,
    );
    if (checked.refused === -1) {
      charges.forEach((c, i) => this.buckets.set(bucketName(c), { state: checked.after[i], limit: c.limit }));
      if (this.buckets.size > PRUNE_AT) this.prune(now);
    }
    return outcomeOf(charges, checked);
  }

  reconcile(settlements: readonly RateSettlement[], now: number): void {
    for (const { charge, used, chargedAt } of settlements) {
      const name = bucketName(charge);
      const state = drain(this.buckets.get(name)?.state ?? FULL, charge.limit, now);
      this.buckets.set(name, { state: reconcile(state, charge.limit, charge.points, used, chargedAt), limit: charge.limit });
    }
  }

  peek(charges: readonly RateCharge[], now: number): LimitState[] {
    return charges.map((c) => stateOf(drain(this.buckets.get(bucketName(c))?.state ?? FULL, c.limit, now), c.limit));
  }

  private prune(now: number): void {
    for (const [name, { state, limit }] of this.buckets) if (drain(state, limit, now).owed === 0) this.buckets.delete(name);
  }
}

/** One bucket per subject and kind (`key:k1:tokens`). */
export function bucketName(charge: RateCharge): string {
  return `${charge.subject}:${charge.kind}`;
}

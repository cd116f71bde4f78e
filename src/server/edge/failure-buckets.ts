import { type BucketState, drain, FULL, fits, take, untilFits } from '../../governance/limits/token-bucket.ts';

/** Subjects remembered at most (~100-150 bytes each with its key string: ~1.5 MiB a table). */
const DEFAULT_CAPACITY = 10_000;

/**
 * Failed authentications per subject (a client address, a key id), bounded in memory.
 *
 * Each subject has a token bucket (governance/limits/token-bucket.ts) of `limit` failures that
 * refills at `limit` a minute: a failure takes a point, and a subject whose bucket cannot take one
 * more is throttled until it can (`retryAfterMs`), so a client may mistype a burst of keys and
 * then go on at the rate. A bucket never owes more than it holds: failures while throttled do
 * not push the end of the wait further (Retry-After stays true).
 *
 * The table is an LRU: a Map in order of each subject's last failure (a failure re-inserts its
 * subject at the end). Past `capacity` subjects the one that failed longest ago is dropped; and
 * each failure and check drops the oldest entries whose buckets are full again, so the table
 * empties once failures stop and the success path's `size === 0` test holds again. A client
 * cycling through more subjects than the capacity (an IPv6 attacker is counted per /64, so it
 * needs that many /64s) is still held to `limit` failures a minute for each of them.
 */
export class FailureBuckets {
  private readonly buckets = new Map<string, BucketState>();
  private readonly limit: number;
  private readonly capacity: number;

  constructor(limit: number, capacity = DEFAULT_CAPACITY) {
    this.limit = limit;
    this.capacity = capacity;
  }

  get size(): number {
    return this.buckets.size;
  }

  /** How long `subject` must wait before another failure may be tried (0: it may now). */
  retryAfterMs(subject: string, now: number): number {
    this.sweep(now);
    const state = this.buckets.get(subject);
    if (state === undefined) return 0;
    const drained = drain(state, this.limit, now);
    return fits(drained, this.limit, 1) ? 0 : untilFits(drained, this.limit, 1);
  }

  /** One more failure of `subject`, taken from its bucket while it has room. */
  fail(subject: string, now: number): void {
    const drained = drain(this.buckets.get(subject) ?? FULL, this.limit, now);
    this.buckets.delete(subject);
    this.buckets.set(subject, fits(drained, this.limit, 1) ? take(drained, 1) : drained);
    if (this.buckets.size > this.capacity) this.buckets.delete(this.buckets.keys().next().value!);
    this.sweep(now);
  }

  /** Drops the oldest entries whose buckets are full again (at most two a call: O(1)). */
  private sweep(now: number): void {
    for (let i = 0; i < 2; i++) {
      const oldest = this.buckets.entries().next();
      if (oldest.done || drain(oldest.value[1], this.limit, now).owed > 0) return;
      this.buckets.delete(oldest.value[0]);
    }
  }
}

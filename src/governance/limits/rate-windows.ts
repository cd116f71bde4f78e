import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { LimitState } from './rate-limit-headers.ts';
import type { Redis } from './redis-link.ts';

/** One per-minute counter a request is charged to: its key's or its project's requests or tokens. */
export interface RateCharge {
  /** `key:<id>` or `project:<id>`. */
  subject: string;
  kind: 'requests' | 'tokens';
  limit: number;
  points: number;
}

export type RateOutcome =
  | { ok: true; states: LimitState[] }
  /** `refused` is the first charge over its limit, `used` what its window held before; nothing stays charged. */
  | { ok: false; refused: number; used: number; states: LimitState[] };

const WINDOW_S = 60;

/**
 * Per-minute windows (requests, tokens) with rate-limiter-flexible: fixed one-minute windows, in
 * memory by default or in Redis (its Lua INCRBY + PEXPIRE, atomic, shared by every instance).
 * One limiter per (kind, limit) pair, since a limiter's quota is fixed; the subject is the key.
 */
export class RateWindows {
  private readonly limiters = new Map<string, RateLimiterAbstract>();
  private readonly redis: Redis | undefined;
  private readonly prefix: string;

  constructor(redis: Redis | undefined, prefix: string) {
    this.redis = redis;
    this.prefix = prefix;
  }

  /**
   * Charges every counter at once (in Redis: all commands in one pipelined write, one round
   * trip). All or nothing: when one is over its limit, every charge is given back, so a refused
   * request costs the caller nothing and a request larger than the whole minute's tokens does not
   * block smaller ones.
   */
  async consume(charges: readonly RateCharge[]): Promise<RateOutcome> {
    const results = await Promise.allSettled(charges.map((c) => this.limiter(c).consume(c.subject, c.points)));
    const states: LimitState[] = [];
    let refused = -1;
    let used = 0;
    let failure: unknown;
    for (let i = 0; i < results.length; i++) {
      const r = results[i];
      const limit = charges[i].limit;
      if (r.status === 'fulfilled') states.push(stateOf(r.value, limit));
      else if (r.reason instanceof RateLimiterRes) {
        states.push(stateOf(r.reason, limit));
        if (refused === -1) {
          refused = i;
          used = Math.max(0, r.reason.consumedPoints - charges[i].points);
        }
      } else {
        failure ??= r.reason;
        states.push({ limit, remaining: 0, resetMs: 0 });
      }
    }
    if (refused === -1 && failure === undefined) return { ok: true, states };
    // Give back what was counted (a refused charge is counted too: rate-limiter-flexible adds first).
    const back = results.map((r, i) =>
      r.status === 'rejected' && !(r.reason instanceof RateLimiterRes)
        ? Promise.resolve()
        : this.adjust(charges[i], -charges[i].points),
    );
    await Promise.allSettled(back);
    if (failure !== undefined) throw failure;
    return { ok: false, refused, used, states };
  }

  /** Adds (debit) or takes back (refund) points in the current window: the real usage against the estimate. */
  adjust(charge: RateCharge, delta: number): Promise<unknown> {
    if (delta === 0) return Promise.resolve();
    const limiter = this.limiter(charge);
    return delta > 0 ? limiter.penalty(charge.subject, delta) : limiter.reward(charge.subject, -delta);
  }

  private limiter(charge: RateCharge): RateLimiterAbstract {
    const name = `${charge.kind}:${charge.limit}`;
    let limiter = this.limiters.get(name);
    if (!limiter) {
      const options = { keyPrefix: `${this.prefix}rate:${name}`, points: charge.limit, duration: WINDOW_S };
      limiter = this.redis
        ? new RateLimiterRedis({ ...options, storeClient: this.redis, useRedisPackage: true })
        : new RateLimiterMemory(options);
      this.limiters.set(name, limiter);
    }
    return limiter;
  }
}

function stateOf(res: RateLimiterRes, limit: number): LimitState {
  return { limit, remaining: Math.max(0, limit - res.consumedPoints), resetMs: Math.max(0, res.msBeforeNext) };
}

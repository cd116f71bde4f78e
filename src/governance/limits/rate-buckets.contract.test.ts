import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createClient } from '@redis/client';
import { describe, it } from 'node:test';
import type { LimitState } from './rate-limit-headers.ts';
import { MemoryRateBuckets, type RateBuckets, type RateCharge, type RateOutcome } from './rate-buckets.ts';
import { RedisRateBuckets } from './redis-rate-buckets.ts';
import type { Redis } from '../../store/redis-link.ts';

const redisUrl = process.env.REDIS_URL;

/** A fixed mix of requests (key and project, requests and tokens), reconciliations and pauses. */
function* sequence(): Generator<{ at: number; charges: RateCharge[]; used: number }> {
  let seed = 11;
  const next = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed % n;
  };
  let at = 1_790_000_000_000;
  for (let i = 0; i < 400; i++) {
    at += next(4) === 0 ? next(20_000) : next(300);
    const key = `key:k${next(2)}`;
    const prompt = 1 + next(400);
    yield {
      at,
      charges: [
        { subject: key, kind: 'requests', limit: 7, points: 1 },
        { subject: key, kind: 'tokens', limit: 2_000, points: prompt },
        { subject: 'project:p1', kind: 'requests', limit: 11, points: 1 },
        { subject: 'project:p1', kind: 'tokens', limit: 3_001, points: prompt },
      ],
      used: next(900),
    };
  }
}

/** Each request's outcome, and what a peek (the console's usage page) read 100 ms later. */
async function run(buckets: RateBuckets): Promise<(RateOutcome | LimitState[])[]> {
  const outcomes: (RateOutcome | LimitState[])[] = [];
  let previous: { charges: RateCharge[]; used: number; at: number } | undefined;
  for (const step of sequence()) {
    // The previous request ends as this one arrives: its tokens are reconciled first.
    if (previous) {
      const tokens = previous.charges.filter((c) => c.kind === 'tokens');
      await buckets.reconcile(
        tokens.map((charge) => ({ charge, used: previous!.used, chargedAt: previous!.at })),
        step.at,
      );
    }
    const outcome = await buckets.consume(step.charges, step.at);
    outcomes.push(outcome, await buckets.peek(step.charges, step.at + 100));
    previous = outcome.ok ? step : undefined;
  }
  return outcomes;
}

describe('rate buckets: memory and Redis give the same answers', () => {
  it(
    'the same sequence of charges and reconciliations',
    { skip: redisUrl ? false : 'REDIS_URL not set: the Redis buckets are not compared' },
    async () => {
      const redis = createClient({ url: redisUrl }) as Redis;
      await redis.connect();
      const prefix = `sluice-test:${process.pid}:${randomBytes(4).toString('hex')}:`;
      try {
        const memory = await run(new MemoryRateBuckets());
        const shared = await run(new RedisRateBuckets(redis, prefix));
        const refusals = memory.filter((o) => 'ok' in o && !o.ok).length;
        assert.ok(refusals > 20 && refusals < memory.length / 2 - 20, `a mix of admissions and refusals: ${refusals} refused`);
        const drawn = memory.filter((o) => Array.isArray(o) && o.some((state) => state.remaining < state.limit)).length;
        assert.ok(drawn > 100, `peeks see the buckets drawn down: ${drawn}`);
        memory.forEach((m, i) => assert.deepEqual(shared[i], m, `request ${i >> 1}${i % 2 ? ', peek' : ''}`));
      } finally {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(keys);
        redis.destroy();
      }
    },
  );
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryRateBuckets, type RateCharge } from './rate-buckets.ts';

const requests = (limit: number): RateCharge => ({ subject: 'key:k1', kind: 'requests', limit, points: 1 });
const tokens = (limit: number, points: number): RateCharge => ({ subject: 'key:k1', kind: 'tokens', limit, points });

/** How many of `count` requests sent at `at` are admitted. */
function admitted(buckets: MemoryRateBuckets, charge: RateCharge, count: number, at: number): number {
  let n = 0;
  for (let i = 0; i < count; i++) if (buckets.consume([charge], at).ok) n++;
  return n;
}

describe('per-minute limits as token buckets (GCRA for requests)', () => {
  it('a burst at the end of one minute cannot be followed by a whole limit at the start of the next', () => {
    const buckets = new MemoryRateBuckets();
    const t0 = Date.UTC(2026, 10, 24, 12, 0, 0);
    assert.equal(admitted(buckets, requests(60), 100, t0 + 59_900), 60);
    // A fixed window would admit 60 more 100 ms later; the bucket refilled by 0.1 s of the rate.
    assert.equal(admitted(buckets, requests(60), 100, t0 + 60_000), 0);
    assert.equal(admitted(buckets, requests(60), 100, t0 + 61_000), 1);
  });

  it('admits a steady rate at the limit, forever', () => {
    const buckets = new MemoryRateBuckets();
    const limit = 120;
    const t0 = 1_000_000;
    assert.equal(admitted(buckets, requests(limit), limit, t0), limit, 'the first burst empties the bucket');
    for (let i = 1; i <= 1_000; i++) {
      const at = t0 + i * (60_000 / limit);
      assert.equal(buckets.consume([requests(limit)], at).ok, true, `request ${i}`);
      assert.equal(buckets.consume([requests(limit)], at).ok, false, `one more at ${i}`);
    }
  });

  it('says what could be sent now, when the bucket is full again, and when a refused request would fit', () => {
    const buckets = new MemoryRateBuckets();
    const first = buckets.consume([tokens(600, 400)], 0);
    assert.deepEqual(first, { ok: true, states: [{ limit: 600, remaining: 200, resetMs: 40_000 }] });
    const refused = buckets.consume([tokens(600, 300)], 0);
    // 100 more tokens are in the bucket after 10 s at 600 a minute.
    assert.deepEqual(refused, {
      ok: false,
      refused: 0,
      used: 400,
      retryAfterMs: 10_000,
      states: [{ limit: 600, remaining: 200, resetMs: 40_000 }],
    });
    assert.equal(buckets.consume([tokens(600, 300)], 9_999).ok, false);
    assert.equal(buckets.consume([tokens(600, 300)], 10_000).ok, true);
  });

  it('is all or nothing over the charges of one request: a refused request costs nothing', () => {
    const buckets = new MemoryRateBuckets();
    const project: RateCharge = { subject: 'project:p1', kind: 'requests', limit: 1, points: 1 };
    assert.equal(buckets.consume([requests(10), project], 0).ok, true);
    const refused = buckets.consume([requests(10), project], 0);
    assert.equal(refused.ok, false);
    assert.equal(refused.ok === false && refused.refused, 1);
    assert.equal(refused.states[0].remaining, 9, 'the key was not charged for the refused request');
  });

  it('reconciles the estimate with the real usage: a refund gives back, a debit takes more', () => {
    const buckets = new MemoryRateBuckets();
    const charge = tokens(1_000, 500);
    buckets.consume([charge], 0);
    buckets.reconcile([{ charge, used: 100, chargedAt: 0 }], 0);
    assert.deepEqual(buckets.consume([tokens(1_000, 0)], 0).states[0], { limit: 1_000, remaining: 900, resetMs: 6_000 });
    buckets.consume([charge], 0);
    buckets.reconcile([{ charge, used: 1_500, chargedAt: 0 }], 0);
    // 100 + 1500 owed in a bucket of 1000: one token fits once 601 were repaid (at 1000 a minute).
    const owing = buckets.consume([tokens(1_000, 1)], 0);
    assert.equal(owing.ok, false);
    assert.equal(owing.states[0].remaining, 0);
    assert.equal(owing.ok === false && owing.retryAfterMs, 36_060);
    assert.equal(owing.states[0].resetMs, 96_000);
  });

  it('a late refund gives back no more than is still owed for its charge', () => {
    const buckets = new MemoryRateBuckets();
    const charge = tokens(600, 600);
    buckets.consume([charge], 0);
    // 30 s later half of the charge was repaid; others took 300 meanwhile.
    buckets.consume([tokens(600, 300)], 30_000);
    buckets.reconcile([{ charge, used: 0, chargedAt: 0 }], 30_000);
    // Only the 300 still owed for the charge come back: the other caller's 300 stay owed.
    assert.deepEqual(buckets.consume([tokens(600, 0)], 30_000).states[0], { limit: 600, remaining: 300, resetMs: 30_000 });
  });

  it('a request larger than the whole bucket is refused, and does not block smaller ones', () => {
    const buckets = new MemoryRateBuckets();
    const huge = buckets.consume([tokens(100, 101)], 0);
    assert.equal(huge.ok, false);
    assert.equal(buckets.consume([tokens(100, 100)], 0).ok, true);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import { MemoryBackend } from './memory-backend.ts';
import { ResponseCache } from './response-cache.ts';

const answer: CanonicalEvent[] = [
  { type: 'text', choice: 0, text: 'Hello' },
  { type: 'finish', choice: 0, reason: 'stop' },
  { type: 'usage', usage: { inputTokens: 3, outputTokens: 1, source: 'provider' } },
];
const policy = { ttlMs: 60_000, maxBytes: 10_000 };

/** The lookups under way have read the backend (and wait on the flight they found). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

function cache(): ResponseCache {
  return new ResponseCache(new MemoryBackend(1_000_000), { cacheLength: false, log: () => {} });
}

describe('ResponseCache', () => {
  it('keeps a whole answer and serves it to the next identical request', async () => {
    const c = cache();
    const first = await c.lookup('k', policy, 'use');
    assert.equal(first.outcome, 'miss');
    first.keep?.(answer.slice(0, 1));
    first.keep?.(answer.slice(1));
    first.settle(true);
    assert.equal(await c.wouldHit('k'), true);
    const second = await c.lookup('k', policy, 'use');
    assert.equal(second.outcome, 'hit');
    assert.deepEqual(second.answer, answer);
    assert.deepEqual(c.stats, { hits: 1, misses: 1, bytes: JSON.stringify(answer).length, evictions: 0 });
  });

  it("keeps nothing of a request that failed, nor an answer over the policy's bytes", async () => {
    const c = cache();
    const failed = await c.lookup('k', policy, 'use');
    failed.keep?.(answer);
    failed.settle(false);
    const large = await c.lookup('k', { ...policy, maxBytes: 10 }, 'use');
    large.keep?.(answer);
    large.settle(true);
    assert.equal(await c.wouldHit('k'), false);
    assert.equal((await c.lookup('k', policy, 'use')).outcome, 'miss');
  });

  it('a refresh goes upstream whatever is kept, and keeps the new answer', async () => {
    const c = cache();
    const first = await c.lookup('k', policy, 'use');
    first.keep?.(answer);
    first.settle(true);
    const refresh = await c.lookup('k', policy, 'refresh');
    assert.equal(refresh.outcome, 'miss');
    const newer: CanonicalEvent[] = [{ type: 'text', choice: 0, text: 'Hi' }, answer[1]];
    refresh.keep?.(newer);
    refresh.settle(true);
    await settled();
    assert.deepEqual((await c.lookup('k', policy, 'use')).answer, newer);
  });

  it("makes identical requests in flight wait for the leader's answer", async () => {
    const c = cache();
    const leader = await c.lookup('k', policy, 'use');
    const followers = Promise.all([1, 2, 3].map(() => c.lookup('k', policy, 'use')));
    assert.equal(await c.wouldHit('k'), true);
    await settled();
    leader.keep?.(answer);
    leader.settle(true);
    const slots = await followers;
    assert.deepEqual(
      slots.map((s) => s.outcome),
      ['hit', 'hit', 'hit'],
    );
    assert.deepEqual(slots[0].answer, answer);
  });

  it('lets the followers go on their own when the leader fails', async () => {
    const c = cache();
    const leader = await c.lookup('k', policy, 'use');
    const followers = Promise.all([1, 2].map(() => c.lookup('k', policy, 'use')));
    await settled();
    leader.settle(false);
    const slots = await followers;
    assert.deepEqual(
      slots.map((s) => s.outcome),
      ['miss', 'miss'],
    );
    // On their own: neither waits for the other, and either may keep its answer.
    slots[1].keep?.(answer);
    slots[1].settle(true);
    await settled();
    assert.equal((await c.lookup('k', policy, 'use')).outcome, 'hit');
  });
});

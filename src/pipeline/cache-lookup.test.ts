import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MASTER } from '../admission/admission.ts';
import { MemoryBackend } from '../cache/memory-backend.ts';
import { ResponseCache } from '../cache/response-cache.ts';
import { configSchema } from '../config/schema.ts';
import type { Candidate } from '../routing/plan.ts';
import type { PipelineContext } from './context.ts';
import { type CacheQuestion, cacheVerdict, lookUpAnswer } from './cache-lookup.ts';
import type { PreparedRequest } from './model-operation.ts';

const config = configSchema.parse({ routes: { faq: { targets: [{ model: 'up/m' }], cache: { ttl_s: 60 } } } });

function context(): PipelineContext {
  const responseCache = new ResponseCache(new MemoryBackend(1_000_000), { cacheLength: false, log: () => {} });
  // The lookup reads the config and the cache only.
  return { config, responseCache } as PipelineContext;
}

function question(overrides: Partial<CacheQuestion> = {}): CacheQuestion {
  const prepared = {
    request: { model: 'faq', messages: [{ role: 'user', content: 'hi' }] },
    streamed: false,
    deadlineMs: 0,
    cacheable: true,
  } as PreparedRequest;
  return {
    caller: MASTER,
    surface: 'chat',
    model: 'faq',
    candidates: [{ key: 'up/m' } as Candidate],
    prepared,
    headers: {},
    ...overrides,
  };
}

describe('lookUpAnswer and cacheVerdict', () => {
  it('answers from the cache once an answer is kept, and a dry run sees it first', async () => {
    const ctx = context();
    assert.equal(await cacheVerdict(question(), ctx), 'miss');
    const miss = await lookUpAnswer(question(), ctx);
    assert.equal(miss.outcome, 'miss');
    // An identical request in flight would be answered by this one.
    assert.equal(await cacheVerdict(question(), ctx), 'hit');
    miss.keep?.([
      { type: 'text', choice: 0, text: 'Hello' },
      { type: 'finish', choice: 0, reason: 'stop' },
    ]);
    miss.settle(true);
    assert.equal(await cacheVerdict(question(), ctx), 'hit');
    assert.equal(await cacheVerdict(question({ headers: { 'x-sluice-cache': 'refresh' } }), ctx), 'miss');
    assert.equal((await lookUpAnswer(question(), ctx)).outcome, 'hit');
    // The dry runs were counted as neither hits nor misses: only the lookups were.
    assert.equal(ctx.responseCache?.stats.hits, 1);
  });

  it('bypasses what was not opted in, a relayed answer and a client that asks to', async () => {
    const ctx = context();
    const notOptedIn = await lookUpAnswer(question({ model: 'up/m' }), ctx);
    assert.deepEqual([notOptedIn.outcome, notOptedIn.optedIn], ['bypass', false]);
    assert.equal(await cacheVerdict(question({ model: 'up/m' }), ctx), 'off');
    const relayed = question({ prepared: { ...question().prepared, cacheable: false } });
    const asked = question({ headers: { 'cache-control': 'no-store' } });
    for (const q of [relayed, asked]) {
      const slot = await lookUpAnswer(q, ctx);
      assert.deepEqual([slot.outcome, slot.optedIn], ['bypass', true]);
      assert.equal(await cacheVerdict(q, ctx), 'bypass');
    }
  });
});

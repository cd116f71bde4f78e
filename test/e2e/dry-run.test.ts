import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { requestRecord, startGateway, type TestGateway, upstreamConfig } from '../helpers/gateway.ts';
import { chatJson, speakAsTestCallers } from './limits-support.ts';

/**
 * x-sluice-dry-run (docs/api/dry-run.md): admitted as usual, answered with what would happen, never
 * sent, and recorded as a dry run that spends nothing. Callers are chosen per request
 * (limits-support.ts): `x-test-key` on the tier `x-test-tier`.
 */

const DRY = { 'x-sluice-dry-run': '1' };
// 0.001 USD a token: a 0.05 USD budget holds 50.
const PRICED = { pricing: { 'up/gpt-test': { input_mtok: 1000, output_mtok: 1000 } } };
const chatBody = { model: 'up/gpt-test', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 5 };

describe('dry run', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    upstream.reply({ headers: { 'content-type': 'application/json' }, body: chatJson('Hello', { prompt_tokens: 8, completion_tokens: 2 }) });
    gw = await startGateway({
      ...upstreamConfig(upstream.url),
      ...PRICED,
      routes: { pair: { targets: [{ model: 'up/gpt-test' }, { model: 'up/gpt-other' }] } },
      tiers: {
        free: { requests_per_minute: 3, concurrent_requests: 2, budgets: [{ period: 'day', limit_usd: 0.05 }] },
        one: { requests_per_minute: 1 },
        broke: { budgets: [{ period: 'day', limit_usd: 0.000001 }] },
      },
    });
    speakAsTestCallers(gw);
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, any> };
  }

  it('names the target, the fallbacks, the cache and the estimate, sends nothing, and records a dry run', async () => {
    const sent = upstream.requests.length;
    const res = await post('/v1/chat/completions', { ...chatBody, model: 'pair', stream: true }, DRY);
    assert.equal(res.status, 200);
    assert.equal(res.json.object, 'sluice.dry_run');
    assert.equal(res.json.model, 'pair');
    assert.equal(res.json.target, 'up/gpt-test');
    assert.deepEqual(res.json.fallbacks, ['up/gpt-other']);
    assert.equal(res.json.cache, 'off');
    assert.ok(res.json.estimate.input_tokens > 0);
    // The prompt and 5 output tokens at 0.001 USD each.
    assert.ok(Math.abs(res.json.estimate.reservation_usd - (res.json.estimate.input_tokens + 5) * 0.001) < 1e-9);
    assert.deepEqual([res.json.tier, res.json.limits, res.json.budgets], [null, [], []]);
    assert.equal(upstream.requests.length, sent);
    const record = await requestRecord(gw, res.json.id);
    assert.equal(record.dry_run, true);
    assert.deepEqual([record.outcome, record.provider, record.model, record.cost_usd], ['ok', 'up', 'gpt-test', 0]);
  });

  it('reads every limit and budget with what the request would leave, consuming none of them', async () => {
    const k1 = { 'x-test-key': 'k1', 'x-test-tier': 'free' };
    for (let i = 0; i < 5; i++) {
      const res = await post('/v1/chat/completions', chatBody, { ...k1, ...DRY });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      const requests = res.json.limits.find((l: any) => l.kind === 'requests');
      assert.deepEqual([requests.scope, requests.limit, requests.remaining, requests.remaining_after], ['key', 3, 3, 2]);
      const concurrent = res.json.limits.find((l: any) => l.kind === 'concurrent');
      assert.deepEqual([concurrent.remaining, concurrent.remaining_after], [2, 1]);
      assert.equal(res.json.budgets[0].spent_usd, 0);
    }
    assert.equal(res(await post('/v1/chat/completions', chatBody, k1)), 200);
    const after = await post('/v1/chat/completions', chatBody, { ...k1, ...DRY });
    const requests = after.json.limits.find((l: any) => l.kind === 'requests');
    assert.deepEqual([requests.remaining, requests.remaining_after], [2, 1]);
    const [budget] = after.json.budgets;
    assert.deepEqual([budget.scope, budget.period, budget.limit_usd], ['key', 'day', 0.05]);
    // The real request's 10 tokens are spent; the dry run would reserve its estimate of the rest.
    assert.ok(Math.abs(budget.spent_usd - 0.01) < 1e-9, String(budget.spent_usd));
    assert.ok(Math.abs(budget.remaining_after_usd - (0.05 - 0.01 - budget.reservation_usd)) < 1e-9);
  });

  it("answers the refusal the request would get, in the surface's error shape, and records it as a dry run", async () => {
    const k2 = { 'x-test-key': 'k2', 'x-test-tier': 'one' };
    assert.equal(res(await post('/v1/chat/completions', chatBody, k2)), 200);
    const chat = await post('/v1/chat/completions', chatBody, { ...k2, ...DRY });
    assert.equal(chat.status, 429);
    assert.equal(chat.json.error.code, 'rate_limit_exceeded');
    assert.ok(Number(chat.headers.get('retry-after')) >= 1);
    const record = await requestRecord(gw, chat.headers.get('x-request-id') ?? '');
    assert.deepEqual([record.dry_run, record.error.code], [true, 'rate_limit_exceeded']);
    const messages = await post('/v1/messages', { ...chatBody, max_tokens: 5 }, { ...k2, ...DRY });
    assert.equal(messages.status, 429);
    assert.deepEqual([messages.json.type, messages.json.error.type], ['error', 'rate_limit_error']);
    const broke = await post('/v1/chat/completions', chatBody, { 'x-test-key': 'k3', 'x-test-tier': 'broke', ...DRY });
    assert.equal(broke.status, 429);
    assert.equal(broke.json.error.code, 'insufficient_quota');
  });

  it('works on the Responses, Messages and embeddings surfaces', async () => {
    const sent = upstream.requests.length;
    const responses = await post('/v1/responses', { model: 'up/gpt-test', input: 'Hi' }, DRY);
    const messages = await post('/v1/messages', chatBody, DRY);
    const embeddings = await post('/v1/embeddings', { model: 'up/text-embedding-3-small', input: ['a', 'b'] }, DRY);
    for (const [res, target] of [
      [responses, 'up/gpt-test'],
      [messages, 'up/gpt-test'],
      [embeddings, 'up/text-embedding-3-small'],
    ] as const) {
      assert.equal(res.status, 200, JSON.stringify(res.json));
      assert.deepEqual([res.json.object, res.json.target, res.json.cache], ['sluice.dry_run', target, 'off']);
    }
    assert.equal(upstream.requests.length, sent);
  });

  it('a bad body is the same 400 with or without the header', async () => {
    const res = await post('/v1/chat/completions', { model: 'up/gpt-test' }, DRY);
    assert.equal(res.status, 400);
    assert.equal((await requestRecord(gw, res.headers.get('x-request-id') ?? '')).dry_run, true);
  });
});

const res = (r: { status: number }) => r.status;

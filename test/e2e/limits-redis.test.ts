import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { parseSse, requestRecord, startGateway, type TestGateway, upstreamConfig } from '../helpers/gateway.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { chatJson, chatSse, post, speakAsTestCallers } from './limits-support.ts';

const redisUrl = process.env.REDIS_URL;
const noRedis = redisUrl ? false : 'REDIS_URL not set: the Redis-backed limits are skipped';

const PRICED = { pricing: { 'up/gpt-test': { input_mtok: 1000, output_mtok: 1000 } } };
const ask = (text = 'Hi', extra: Record<string, unknown> = {}) => ({ model: 'up/gpt-test', messages: [{ role: 'user', content: text }], ...extra });
const framesOf = (sse: string) => sse.split(/(?<=\n\n)/);
/** Keys of this run only, so parallel runs against one Redis never meet. */
const prefix = () => `sluice-test:${process.pid}:${randomBytes(4).toString('hex')}:`;

describe('limits in Redis', { skip: noRedis }, () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    upstream.reply({ body: chatJson('ok'), headers: { 'content-type': 'application/json' } });
    gw = await startGateway({
      ...upstreamConfig(upstream.url),
      ...PRICED,
      // Generous: the 2-core test machine is busy; timeouts have their own test below.
      limits: { redis_url: redisUrl, redis_prefix: prefix(), redis_timeout_ms: 2_000 },
      tiers: {
        free: { requests_per_minute: 3, tokens_per_minute: 1000, concurrent_requests: 1 },
        budget: { budgets: [{ period: 'day', limit_usd: 0.05 }] },
      },
    });
    speakAsTestCallers(gw);
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('counts requests, tokens and in-flight requests, and refuses over the limit', async () => {
    const k = { 'x-test-key': 'r1', 'x-test-tier': 'free' };
    const first = await post(gw, ask(), k);
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers.get('x-ratelimit-remaining-requests'), '2');
    assert.equal(first.headers.get('x-ratelimit-remaining-tokens'), '993');
    upstream.reply({ pieces: framesOf(chatSse(['a', 'b', 'c'])), delayMs: 100 });
    const slow = post(gw, ask('slow', { stream: true }), k);
    await new Promise((r) => setTimeout(r, 100));
    const busy = await post(gw, ask(), k);
    assert.equal(busy.status, 429);
    assert.match(JSON.parse(busy.text).error.message, /Too many concurrent requests/);
    assert.equal((await slow).status, 200);
    upstream.reply({ body: chatJson('ok'), headers: { 'content-type': 'application/json' } });
    // The refused one was given back: this is the third of three.
    assert.equal((await post(gw, ask(), k)).status, 200);
    const over = await post(gw, ask(), k);
    assert.equal(over.status, 429);
    assert.equal(JSON.parse(over.text).error.code, 'rate_limit_exceeded');
  });

  it('holds a stream to its budget and then refuses the key', async () => {
    const k = { 'x-test-key': 'r2', 'x-test-tier': 'budget' };
    upstream.reply({ pieces: framesOf(chatSse(Array.from({ length: 60 }, () => 'tokens. '))), delayMs: 5 });
    const res = await post(gw, ask('Hi', { stream: true }), k);
    const frames = parseSse(res.text).frames;
    assert.equal(frames.at(-1)?.data, '[DONE]');
    assert.equal(JSON.parse(frames.at(-2)?.data ?? '{}').choices[0].finish_reason, 'length');
    const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.equal(row.finish_reason, 'budget_exhausted');
    const refused = await post(gw, ask(), k);
    assert.equal(refused.status, 429);
    assert.equal(JSON.parse(refused.text).error.code, 'insufficient_quota');
  });
});

describe('limits when Redis is unreachable: fail_open and fail_closed', { skip: noRedis }, () => {
  let upstream: FakeUpstream;
  let proxy: TcpProxy;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    upstream.reply({ body: chatJson('ok'), headers: { 'content-type': 'application/json' } });
    const target = new URL(redisUrl ?? 'redis://127.0.0.1:6379');
    proxy = await startTcpProxy(Number(target.port || 6379), target.hostname);
    target.host = `127.0.0.1:${proxy.port}`;
    gw = await startGateway({
      ...upstreamConfig(upstream.url),
      limits: { redis_url: target.toString(), redis_prefix: prefix(), redis_timeout_ms: 200 },
      tiers: {
        open: { requests_per_minute: 1000, redis_unavailable: 'fail_open' },
        closed: { requests_per_minute: 1000, redis_unavailable: 'fail_closed' },
      },
    });
    speakAsTestCallers(gw);
  });
  after(async () => {
    await gw.close();
    await proxy.close();
    await upstream.close();
  });

  /** A bounded load on one tier: each answer's status, in order; `onEach` runs after each answer. */
  async function load(tier: string, count: number, onEach: () => Promise<void> = async () => {}): Promise<number[]> {
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) {
      statuses.push((await post(gw, ask(), { 'x-test-key': `u-${tier}`, 'x-test-tier': tier })).status);
      await onEach();
    }
    return statuses;
  }

  it("cut mid-load: fail_open admits on this instance's own limits, fail_closed answers 503; both come back when Redis does", async () => {
    assert.deepEqual(await load('open', 3), [200, 200, 200]);
    assert.deepEqual(await load('closed', 3), [200, 200, 200]);
    // Both tiers under load at once; Redis is cut after the tenth answer.
    let answered = 0;
    const cutAtTen = async () => {
      if (++answered === 10) await proxy.cut();
    };
    const [open, closed] = await Promise.all([load('open', 20, cutAtTen), load('closed', 20, cutAtTen)]);
    assert.ok(
      open.every((s) => s === 200),
      `fail_open: ${open}`,
    );
    assert.ok(closed.every((s) => s === 200 || s === 503) && closed.includes(503), `fail_closed: ${closed}`);
    const refused = await post(gw, ask(), { 'x-test-key': 'u-closed', 'x-test-tier': 'closed' });
    assert.equal(refused.status, 503);
    assert.equal(JSON.parse(refused.text).error.code, 'limits_unavailable');
    assert.equal(refused.headers.get('retry-after'), '1');
    const admitted = await post(gw, ask(), { 'x-test-key': 'u-open', 'x-test-tier': 'open' });
    assert.equal(admitted.status, 200);
    assert.equal(admitted.headers.get('x-ratelimit-limit-requests'), '1000', "limited by this instance's own books");

    await proxy.restore();
    const deadline = Date.now() + 15_000;
    let back = 0;
    while (Date.now() < deadline && back !== 200) {
      back = (await post(gw, ask(), { 'x-test-key': 'u-closed', 'x-test-tier': 'closed' })).status;
      if (back !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(back, 200, 'fail_closed admits again once Redis is back');
  });

  it('a stalled Redis (half-open) costs at most the timeout, then the policy applies at once', async () => {
    proxy.stall();
    const started = Date.now();
    const first = await post(gw, ask(), { 'x-test-key': 'u-closed', 'x-test-tier': 'closed' });
    assert.equal(first.status, 503);
    assert.ok(Date.now() - started < 2_000, `took ${Date.now() - started} ms`);
    const t = Date.now();
    assert.equal((await post(gw, ask(), { 'x-test-key': 'u-open', 'x-test-tier': 'open' })).status, 200);
    assert.ok(Date.now() - t < 150, 'the next request does not wait for Redis again');
    await proxy.restore();
  });
});

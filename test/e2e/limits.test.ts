import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI, { RateLimitError } from 'openai';
import { type FakeUpstream, startFakeUpstream, type UpstreamReply } from '../helpers/fake-upstream.ts';
import { parseSse, requestRecord, startGateway, type TestGateway, upstreamConfig } from '../helpers/gateway.ts';
import { chatJson, chatSse, post, speakAsTestCallers } from './limits-support.ts';

const K1 = { 'x-test-key': 'k1', 'x-test-tier': 'free' };
/** An SSE body as one piece per frame (sent with a delay between them). */
const framesOf = (sse: string) => sse.split(/(?<=\n\n)/);
const ask = (text = 'Hi', extra: Record<string, unknown> = {}) => ({ model: 'up/gpt-test', messages: [{ role: 'user', content: text }], ...extra });

describe('limits: requests per minute, tokens per minute, concurrency', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    upstream.reply((req): UpstreamReply =>
      (req.json as { stream?: boolean }).stream
        ? { body: chatSse(['Hello', ' there']), headers: { 'x-request-id': 'req_up_1' } }
        : { body: chatJson('Hello'), headers: { 'content-type': 'application/json', 'x-request-id': 'req_up_2' } },
    );
    gw = await startGateway({
      ...upstreamConfig(upstream.url),
      tiers: {
        free: { requests_per_minute: 5, concurrent_requests: 3 },
        tokens: { tokens_per_minute: 100 },
        single: { concurrent_requests: 1 },
        pooled: { project: { requests_per_minute: 3 } },
      },
    });
    speakAsTestCallers(gw);
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('counts requests per key and refuses the one over the limit with 429, Retry-After and the OpenAI and IETF headers', async () => {
    for (let i = 1; i <= 5; i++) {
      const res = await post(gw, ask(), K1);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers.get('x-ratelimit-limit-requests'), '5');
      assert.equal(res.headers.get('x-ratelimit-remaining-requests'), String(5 - i));
      assert.match(res.headers.get('x-ratelimit-reset-requests') ?? '', /^(\d+m)?\d+(\.\d+)?s$|^\d+ms$/);
      assert.equal(res.headers.get('ratelimit-policy'), '"requests";q=5;w=60, "concurrency";q=3;qu="concurrent-requests"');
      assert.match(res.headers.get('ratelimit') ?? '', new RegExp(`^"requests";r=${5 - i};t=\\d+, "concurrency";r=2$`));
    }
    const refused = await post(gw, ask(), K1);
    assert.equal(refused.status, 429);
    const body = JSON.parse(refused.text) as { error: { type: string; code: string; message: string } };
    assert.equal(body.error.code, 'rate_limit_exceeded');
    assert.equal(body.error.type, 'rate_limit_exceeded');
    assert.match(
      body.error.message,
      /^Rate limit reached for key k1 on requests per min \(RPM\): Limit 5, Used 5, Requested 1\. Please try again in /,
    );
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
    assert.ok(Number(refused.headers.get('retry-after-ms')) > 0);
    assert.equal(refused.headers.get('x-ratelimit-remaining-requests'), '0');
    // Another key has its own window.
    assert.equal((await post(gw, ask(), { ...K1, 'x-test-key': 'k2' })).status, 200);
    // The refusal has its ledger row like any authenticated refusal.
    const row = await requestRecord(gw, refused.headers.get('x-request-id') ?? '');
    assert.equal(row.error?.code, 'rate_limit_exceeded');
  });

  it('the openai SDK sees a RateLimitError with the code', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: { ...K1, 'x-test-key': 'k-sdk' } });
    for (let i = 0; i < 5; i++) await client.chat.completions.create(ask() as never);
    await assert.rejects(client.chat.completions.create(ask() as never), (err: unknown) => {
      assert.ok(err instanceof RateLimitError);
      assert.equal(err.code, 'rate_limit_exceeded');
      return true;
    });
  });

  it('charges the prompt estimate up front and reconciles with the real usage', async () => {
    const headers = { 'x-test-key': 'kt', 'x-test-tier': 'tokens' };
    // A prompt far over 100 tokens is refused whole, and the refusal takes nothing from the window.
    const big = await post(gw, ask('word '.repeat(200)), headers);
    assert.equal(big.status, 429);
    assert.match(JSON.parse(big.text).error.message, /on tokens per min \(TPM\): Limit 100/);
    // "Hi" is estimated at 1 + 3 + 3 = 7 tokens; the upstream reports 10 + 5 = 15, reconciled after.
    const first = await post(gw, ask('Hi'), headers);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('x-ratelimit-remaining-tokens'), '93');
    await requestRecord(gw, first.headers.get('x-request-id') ?? '');
    const second = await post(gw, ask('Hi'), headers);
    assert.equal(second.headers.get('x-ratelimit-remaining-tokens'), String(100 - 15 - 7));
  });

  it('holds concurrent requests to the limit and frees the slot when a request ends', async () => {
    const headers = { 'x-test-key': 'kc', 'x-test-tier': 'single' };
    upstream.reply({ pieces: framesOf(chatSse(['a', 'b', 'c'])), delayMs: 100 });
    const slow = post(gw, ask('slow', { stream: true }), headers);
    await new Promise((r) => setTimeout(r, 100));
    const second = await post(gw, ask(), headers);
    assert.equal(second.status, 429);
    assert.match(JSON.parse(second.text).error.message, /Too many concurrent requests for key kc: at most 1/);
    assert.equal(second.headers.get('retry-after'), '1');
    assert.equal((await slow).status, 200);
    upstream.reply({ body: chatJson('ok'), headers: { 'content-type': 'application/json' } });
    assert.equal((await post(gw, ask(), headers)).status, 200);
  });

  it('a project limit counts every key of the project together', async () => {
    upstream.reply({ body: chatJson('ok'), headers: { 'content-type': 'application/json' } });
    const as = (key: string) => ({ 'x-test-key': key, 'x-test-tier': 'pooled', 'x-test-project': 'team' });
    assert.equal((await post(gw, ask(), as('a1'))).status, 200);
    assert.equal((await post(gw, ask(), as('a2'))).status, 200);
    assert.equal((await post(gw, ask(), as('a3'))).status, 200);
    const refused = await post(gw, ask(), as('a4'));
    assert.equal(refused.status, 429);
    assert.match(JSON.parse(refused.text).error.message, /for project team on requests per min/);
  });

  it('callers without a tier are not limited and get no limit headers', async () => {
    upstream.reply({ body: chatJson('ok'), headers: { 'content-type': 'application/json' } });
    for (let i = 0; i < 7; i++) {
      const res = await post(gw, ask(), { 'x-test-key': 'free-rider' });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-ratelimit-limit-requests'), null);
    }
  });
});

describe('limits: the accounting profile warns within 10% of a per-minute limit', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    upstream.reply({ body: chatSse(['Hi']) });
    gw = await startGateway({ ...upstreamConfig(upstream.url), tiers: { free: { requests_per_minute: 10 } } });
    speakAsTestCallers(gw);
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('sends rate_limit_warning once, after usage_start, from the request that leaves 1 of 10', async () => {
    const headers = { ...K1, 'x-sluice-profile': 'accounting' };
    const warnings: unknown[] = [];
    for (let i = 1; i <= 10; i++) {
      const res = await post(gw, ask('Hi', { stream: true }), headers);
      const frames = parseSse(res.text).frames;
      const found = frames.filter((f) => f.event === 'rate_limit_warning');
      if (i < 9) assert.equal(found.length, 0, `request ${i}`);
      else {
        assert.equal(found.length, 1, `request ${i}`);
        assert.equal(frames[0].event, 'usage_start');
        assert.equal(frames[1].event, 'rate_limit_warning');
        warnings.push(JSON.parse(found[0].data));
      }
    }
    const [ninth, tenth] = warnings as Record<string, unknown>[];
    assert.deepEqual(Object.keys(ninth), ['type', 'request_id', 'provider', 'model', 'scope', 'limit_type', 'limit', 'remaining', 'reset_ms']);
    assert.equal(ninth.type, 'rate_limit_warning');
    assert.equal(ninth.scope, 'key');
    assert.equal(ninth.limit_type, 'requests');
    assert.equal(ninth.limit, 10);
    assert.equal(ninth.remaining, 1);
    assert.ok(typeof ninth.reset_ms === 'number' && ninth.reset_ms > 0 && ninth.reset_ms <= 60_000);
    assert.equal(tenth.remaining, 0);
  });
});

describe('limits: tier deadline and idle timeout replace the stream settings', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ stream: { idle_timeout_s: 60 }, tiers: { free: { deadline_s: 1 }, twitchy: { idle_timeout_s: 0.5 } } });
    speakAsTestCallers(gw);
  });
  after(() => gw.close());

  it('the deadline error names the tier', async () => {
    const res = await post(gw, { model: 'mock/slow', stream: true, messages: [{ role: 'user', content: 'one two three four five' }] }, K1);
    const frames = parseSse(res.text).frames;
    const error = JSON.parse(frames.at(-2)?.data ?? '{}') as { error: { code: string; message: string; type: string } };
    assert.deepEqual(error.error, {
      message: 'Request timed out after 1s. Your Free tier has a 1-second timeout limit.',
      type: 'timeout_error',
      code: 'timeout',
    });
    assert.equal(frames.at(-1)?.data, '[DONE]');
  });

  it("the idle timeout is the tier's", async () => {
    const started = Date.now();
    const res = await post(
      gw,
      { model: 'mock/stall', stream: true, messages: [{ role: 'user', content: 'x' }] },
      { 'x-test-key': 'k9', 'x-test-tier': 'twitchy' },
    );
    assert.ok(Date.now() - started < 10_000);
    assert.match(res.text, /stream_idle_timeout/);
  });
});

describe("limits: an upstream's own 429 and request id are passed on", () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway(upstreamConfig(upstream.url));
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('keeps Retry-After, x-ratelimit-* and the upstream request id (header and ledger)', async () => {
    upstream.reply({
      status: 429,
      headers: {
        'content-type': 'application/json',
        'retry-after': '7',
        'x-ratelimit-limit-requests': '500',
        'x-ratelimit-remaining-requests': '0',
        'x-ratelimit-reset-requests': '7s',
        'x-ratelimit-limit-tokens': '30000',
        'x-request-id': 'req_upstream_429',
      },
      body: JSON.stringify({ error: { message: 'Rate limit reached for gpt-test', type: 'requests', code: 'rate_limit_exceeded' } }),
    });
    const res = await post(gw, ask());
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '7');
    assert.equal(res.headers.get('x-ratelimit-limit-requests'), '500');
    assert.equal(res.headers.get('x-ratelimit-remaining-requests'), '0');
    assert.equal(res.headers.get('x-ratelimit-reset-requests'), '7s');
    assert.equal(res.headers.get('x-ratelimit-limit-tokens'), '30000');
    assert.equal(res.headers.get('x-upstream-request-id'), 'req_upstream_429');
    const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.equal(row.upstream_request_id, 'req_upstream_429');
  });

  it('a stream carries the upstream request id (anthropic-style request-id too)', async () => {
    upstream.reply({ body: chatSse(['Hi']), headers: { 'request-id': 'req_011CSHoEeqs5C35K2UUqR7Fy' } });
    const res = await post(gw, ask('Hi', { stream: true }));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-upstream-request-id'), 'req_011CSHoEeqs5C35K2UUqR7Fy');
    const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.equal(row.upstream_request_id, 'req_011CSHoEeqs5C35K2UUqR7Fy');
  });
});

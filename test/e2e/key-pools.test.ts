import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FakeUpstream, type RecordedRequest, startFakeUpstream, type UpstreamReply } from '../helpers/fake-upstream.ts';
import { requestRecord, startGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * Provider key pools (docs/providers.md "Key pools") against one fake OpenAI-compatible upstream
 * that answers by the key it is sent: a key per behaviour (fine, rate limited with Retry-After,
 * refused with 401, out of requests by its x-ratelimit headers). Each case has its own provider,
 * so the state one case leaves in its pool is its own.
 */

const completion = (key: string, headers: Record<string, string> = {}): UpstreamReply => ({
  status: 200,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify({
    id: `chatcmpl-${key}`,
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: `answered with ${key}` }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, prompt_tokens_details: { cached_tokens: 2 } },
  }),
});

const replies: Record<string, UpstreamReply> = {
  'sk-limited': {
    status: 429,
    headers: { 'content-type': 'application/json', 'retry-after': '30' },
    body: '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}',
  },
  'sk-bad': {
    status: 401,
    headers: { 'content-type': 'application/json' },
    body: '{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}',
  },
  'sk-drained': completion('sk-drained', { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '30s' }),
};

/** A spare key's weight: drawn about once in a billion while the first key is usable, so the order sent is certain. */
const RARELY = 1e-9;

const keyOf = (req: RecordedRequest) => String(req.headers.authorization ?? '').replace(/^Bearer /, '');

describe('provider key pools', () => {
  let up: FakeUpstream;
  let gw: TestGateway;
  const provider = (keys: Record<string, unknown>[]) => ({ base_url: `${up.url}/v1`, api_keys: keys });

  before(async () => {
    up = await startFakeUpstream();
    up.reply((req) => replies[keyOf(req)] ?? completion(keyOf(req)));
    gw = await startGateway({
      providers: {
        spread: provider([
          { key: 'sk-heavy', label: 'heavy', weight: 3 },
          { key: 'sk-light', label: 'light', weight: 1 },
        ]),
        cool: provider([
          { key: 'sk-limited', label: 'limited' },
          { key: 'sk-spare', label: 'spare', weight: RARELY },
        ]),
        auth: provider([
          { key: 'sk-bad', label: 'revoked' },
          { key: 'sk-good', label: 'good', weight: RARELY },
        ]),
        learned: provider([
          { key: 'sk-drained', label: 'drained' },
          { key: 'sk-fresh', label: 'fresh', weight: RARELY },
        ]),
        capped: provider([
          { key: 'sk-one', label: 'one', rpm: 2 },
          { key: 'sk-two', label: 'two', weight: RARELY },
        ]),
        sticky: provider([
          { key: 'sk-s1', label: 's1' },
          { key: 'sk-s2', label: 's2' },
          { key: 'sk-s3', label: 's3' },
        ]),
        dead: provider([{ key: 'sk-bad', label: 'only' }]),
        plain: { base_url: `${up.url}/v1`, api_key: 'sk-plain' },
      },
      routes: { rescued: { targets: [{ model: 'dead/m' }, { model: 'plain/m' }] } },
    });
  });
  after(async () => {
    await gw.close();
    await up.close();
  });

  async function chat(model: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...extra }),
    });
    return { status: res.status, json: (await res.json()) as Record<string, any>, requestId: res.headers.get('x-request-id') ?? '' };
  }
  const keysSent = (from: number) => up.requests.slice(from).map(keyOf);

  it('spreads requests over the keys by weight, and the ledger names the key by its label', async () => {
    const from = up.requests.length;
    const labels: string[] = [];
    for (let i = 0; i < 80; i++) {
      const res = await chat('spread/m');
      assert.equal(res.status, 200);
      labels.push((await requestRecord(gw, res.requestId)).provider_key);
    }
    const heavy = keysSent(from).filter((k) => k === 'sk-heavy').length;
    assert.ok(heavy > 45 && heavy < 75, `heavy got ${heavy} of 80`);
    assert.equal(labels.filter((l) => l === 'heavy').length, heavy);
    assert.ok(labels.every((l) => l === 'heavy' || l === 'light'));
  });

  it('the spend report groups by provider key, with the share of input tokens read from the cache', async () => {
    const res = await fetch(`${gw.url}/v1/spend?group_by=provider_key&period=hour`);
    assert.equal(res.status, 200);
    const report = (await res.json()) as { groups: { provider_key: string | null; totals: Record<string, number> }[] };
    const byKey = Object.fromEntries(report.groups.map((g) => [g.provider_key, g.totals]));
    assert.equal(byKey['spread/heavy'].requests + byKey['spread/light'].requests, 80);
    // Each answer: 3 input tokens, 2 of them cached.
    assert.equal(byKey['spread/heavy'].cached_input_tokens, 2 * byKey['spread/heavy'].requests);
    assert.equal(byKey['spread/light'].cached_share, 0.6667);
    const mixed = await fetch(`${gw.url}/v1/spend?group_by=provider_key,tag`);
    assert.equal(mixed.status, 400);
  });

  it('a 429 cools its key down for Retry-After: the same request is answered with another key, and the next ones skip it', async () => {
    const from = up.requests.length;
    const first = await chat('cool/m');
    assert.equal(first.status, 200);
    assert.deepEqual(keysSent(from), ['sk-limited', 'sk-spare']);
    assert.equal((await requestRecord(gw, first.requestId)).provider_key, 'spare');
    for (let i = 0; i < 3; i++) assert.equal((await chat('cool/m')).status, 200);
    assert.deepEqual(keysSent(from + 2), ['sk-spare', 'sk-spare', 'sk-spare']);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(metrics, /sluice_provider_key_state\{provider="cool",key="limited",state="cooling"\} 1/);
    assert.match(metrics, /sluice_provider_key_state\{provider="cool",key="spare",state="available"\} 1/);
  });

  it('a 401 takes its key out, says so in the log, /metrics and /readyz, and never sends it again', async () => {
    const from = up.requests.length;
    assert.equal((await chat('auth/m')).status, 200);
    assert.equal((await chat('auth/m')).status, 200);
    assert.deepEqual(keysSent(from), ['sk-bad', 'sk-good', 'sk-good']);
    assert.ok(gw.logs.some((line) => line.includes("provider auth: key 'revoked' taken out of the pool")));
    assert.ok(!gw.logs.some((line) => line.includes('sk-bad')), 'the key itself is never logged');
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(metrics, /sluice_provider_key_state\{provider="auth",key="revoked",state="removed"\} 1/);
    const res = await fetch(`${gw.url}/readyz`);
    const ready = (await res.json()) as Record<string, any>;
    // Not required: the other keys and targets still answer.
    assert.equal(res.status, 200);
    assert.equal(ready.checks.provider_keys.state, 'down');
    assert.match(ready.checks.provider_keys.reason, /auth\/revoked \(401\)/);
  });

  it('a pool whose every key is refused fails over like a refused target: 502 upstream_authentication_failed', async () => {
    const res = await chat('dead/m');
    assert.equal(res.status, 502);
    assert.equal(res.json.error.code, 'upstream_authentication_failed');
    const again = await chat('dead/m');
    assert.equal(again.status, 502);
    assert.match(again.json.error.message, /refused every key/);
  });

  it('a route falls back from a refused pool to a provider without one; the ledger names no key', async () => {
    const res = await chat('rescued');
    assert.equal(res.status, 200);
    const record = await requestRecord(gw, res.requestId);
    assert.deepEqual([record.provider, record.provider_key], ['plain', null]);
  });

  it("learns a key's limit from x-ratelimit headers and leaves it until the reset", async () => {
    const from = up.requests.length;
    for (let i = 0; i < 3; i++) assert.equal((await chat('learned/m')).status, 200);
    assert.deepEqual(keysSent(from), ['sk-drained', 'sk-fresh', 'sk-fresh']);
  });

  it('holds a key to its configured requests a minute', async () => {
    const from = up.requests.length;
    for (let i = 0; i < 4; i++) assert.equal((await chat('capped/m')).status, 200);
    assert.deepEqual(keysSent(from), ['sk-one', 'sk-one', 'sk-two', 'sk-two']);
  });

  it('sticks a prompt_cache_key, a user and a session to one key', async () => {
    for (const [extra, headers] of [
      [{ prompt_cache_key: 'doc-1' }, {}],
      [{ user: 'ada' }, {}],
      [{}, { 'x-sluice-session': 'conversation-7' }],
    ] as const) {
      const from = up.requests.length;
      for (let i = 0; i < 6; i++) assert.equal((await chat('sticky/m', extra, headers)).status, 200);
      assert.equal(new Set(keysSent(from)).size, 1, JSON.stringify(extra));
    }
    // Different affinities still spread over the keys.
    const from = up.requests.length;
    for (let i = 0; i < 30; i++) await chat('sticky/m', { prompt_cache_key: `doc-${i}` });
    assert.equal(new Set(keysSent(from)).size, 3);
  });
});

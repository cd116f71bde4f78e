import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { StreamKind } from '../../src/protocol/check/detect.ts';
import { adminCall, projectWithKey } from '../helpers/admin-client.ts';
import { chatSse, speakAsTestCallers } from './limits-support.ts';
import { violations } from '../helpers/check-streams.ts';
import type { RecordedRequest, UpstreamReply } from '../helpers/fake-upstream.ts';
import { startFakeUpstream } from '../helpers/fake-upstream.ts';
import { openAIStreamBody } from '../helpers/fixtures.ts';
import { parseSse, requestRecord, startGateway, type TestGateway, upstreamConfig, useUpstreamGateway } from '../helpers/gateway.ts';

/** A route that opts in to the cache, and the same target under its own name, which does not. */
function cachedConfig(upstreamUrl: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...upstreamConfig(upstreamUrl),
    routes: { cached: { targets: [{ model: 'up/gpt-4o-mini' }], cache: { ttl_s: 60 } } },
    pricing: { 'up/gpt-4o-mini': { input_mtok: 0.15, output_mtok: 0.6 } },
    ledger: { flush_interval_ms: 10 },
    ...extra,
  };
}

/** A tool call answer (the recording), as a stream or as one completion, whichever the request asks. */
const TOOL_CALL_STREAM = openAIStreamBody('openai-chat/gpt4o-mini-tool-call.sse');
const TOOL_CALL_COMPLETION = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1782955817,
  model: 'gpt-4o-mini-2024-07-18',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_ZR5U', type: 'function', function: { name: 'get_capital', arguments: '{"country":"France"}' } }],
      },
      finish_reason: 'tool_calls',
    },
  ],
  usage: { prompt_tokens: 53, completion_tokens: 15, total_tokens: 68 },
});

function toolCallAnswer(req: RecordedRequest): UpstreamReply {
  return (req.json as { stream?: boolean }).stream
    ? { body: TOOL_CALL_STREAM }
    : { headers: { 'content-type': 'application/json' }, body: TOOL_CALL_COMPLETION };
}

/** The surfaces the response cache serves (media streams are relayed, never cached). */
type CachedKind = Exclude<StreamKind, 'media'>;

const PATHS: Record<CachedKind, string> = { chat: '/v1/chat/completions', responses: '/v1/responses', messages: '/v1/messages' };

/** A request on one surface with the given prompt, streamed or not. */
function bodyFor(kind: CachedKind, prompt: string, stream: boolean): Record<string, unknown> {
  if (kind === 'responses') return { model: 'cached', input: prompt, stream };
  if (kind === 'messages') return { model: 'cached', max_tokens: 100, messages: [{ role: 'user', content: prompt }], stream };
  return { model: 'cached', messages: [{ role: 'user', content: prompt }], stream, ...(stream && { stream_options: { include_usage: true } }) };
}

interface Answer {
  status: number;
  cache: string | null;
  requestId: string;
  text: string;
}

async function send(gw: TestGateway, kind: CachedKind, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${gw.url}${PATHS[kind]}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, cache: res.headers.get('x-sluice-cache'), requestId: res.headers.get('x-request-id') ?? '', text: await res.text() };
}

/** What a stream says, without what differs from one answer to the next by design: ids and times. */
function content(text: string): unknown[] {
  return parseSse(text).frames.map((f) => (f.data === '[DONE]' ? f.data : scrub(JSON.parse(f.data))));
}

const FRESH = new Set(['id', 'created', 'created_at', 'call_id', 'item_id', 'sequence_number']);

function scrub(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(scrub);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !FRESH.has(k))
      .map(([k, v]) => [k, scrub(v)]),
  );
}

describe('the exact response cache', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ config: cachedConfig(url) }));

  for (const kind of ['chat', 'responses', 'messages'] as const) {
    it(`${kind}: replays a streamed answer through the live encoders, with fresh ids, for both stream modes`, async () => {
      upstream.reply(toolCallAnswer);
      const prompt = `capital of France? (${kind})`;
      const before = upstream.requests.length;
      const miss = await send(gw, kind, bodyFor(kind, prompt, true));
      const hit = await send(gw, kind, bodyFor(kind, prompt, true));
      const whole = await send(gw, kind, bodyFor(kind, prompt, false));
      assert.equal(upstream.requests.length - before, 1);
      assert.deepEqual([miss.cache, hit.cache, whole.cache], ['miss', 'hit', 'hit']);
      assert.deepEqual([miss.status, hit.status, whole.status], [200, 200, 200]);
      assert.deepEqual(violations(hit.text, kind), []);
      assert.deepEqual(content(hit.text), content(miss.text));
      assert.notEqual(hit.requestId, miss.requestId);
      assert.ok(hit.text.includes(hit.requestId) && !hit.text.includes(miss.requestId));
      assert.ok(whole.text.includes('get_capital'));

      const [first, second] = [await requestRecord(gw, miss.requestId), await requestRecord(gw, hit.requestId)];
      assert.equal(first.response_cache, 'miss');
      assert.ok(first.cost_usd > 0);
      assert.equal(second.response_cache, 'hit');
      assert.equal(second.cost_usd, 0);
      assert.equal(second.cache_saved_usd, first.cost_usd);
      assert.deepEqual(second.usage, first.usage);
      // The provider's prompt-cache tokens are another matter: nothing was read from its cache.
      assert.equal(second.usage.cached_input_tokens, 0);
    });
  }

  it('replays a non-streamed answer as a stream that passes the checker, tool calls and usage included', async () => {
    upstream.reply(toolCallAnswer);
    const body = bodyFor('chat', 'capital of Spain?', false);
    const whole = await send(gw, 'chat', body);
    const streamed = await send(gw, 'chat', { ...body, stream: true, stream_options: { include_usage: true } });
    assert.deepEqual([whole.cache, streamed.cache], ['miss', 'hit']);
    assert.deepEqual(violations(streamed.text, 'chat'), []);
    const chunks = parseSse(streamed.text)
      .frames.filter((f) => f.data !== '[DONE]')
      .map((f) => JSON.parse(f.data));
    const args = chunks.flatMap((c) => c.choices.flatMap((ch: any) => ch.delta.tool_calls ?? [])).map((t: any) => t.function?.arguments ?? '');
    assert.equal(args.join(''), '{"country":"France"}');
    assert.deepEqual(chunks.at(-1).usage, JSON.parse(whole.text).usage);
  });

  it('says bypass when not opted in or asked to, refreshes on no-cache, and refuses an unknown x-sluice-cache', async () => {
    upstream.reply(toolCallAnswer);
    const body = bodyFor('chat', 'capital of Italy?', false);
    const before = upstream.requests.length;
    assert.equal((await send(gw, 'chat', body)).cache, 'miss');
    assert.equal((await send(gw, 'chat', body, { 'cache-control': 'no-store' })).cache, 'bypass');
    assert.equal((await send(gw, 'chat', body, { 'x-sluice-cache': 'bypass' })).cache, 'bypass');
    const refreshed = await send(gw, 'chat', body, { 'cache-control': 'no-cache' });
    assert.equal(refreshed.cache, 'miss');
    assert.equal((await send(gw, 'chat', { ...body, model: 'up/gpt-4o-mini' })).cache, 'bypass');
    assert.equal(upstream.requests.length - before, 5);
    assert.equal((await send(gw, 'chat', body)).cache, 'hit');
    const bad = await send(gw, 'chat', body, { 'x-sluice-cache': 'always' });
    assert.equal(bad.status, 400);
    assert.equal(JSON.parse(bad.text).error.param, 'x-sluice-cache');
    const bypassed = await requestRecord(gw, (await send(gw, 'chat', { ...body, model: 'up/gpt-4o-mini' })).requestId);
    assert.equal(bypassed.response_cache, undefined);
  });

  it('keeps nothing of an upstream error, a cut stream or an answer cut by its output limit', async () => {
    const cases: UpstreamReply[] = [
      { status: 500, headers: { 'content-type': 'application/json' }, body: '{"error":{"message":"boom","type":"server_error"}}' },
      // The tool call's arguments, then the connection closes: no finish, no usage.
      { body: TOOL_CALL_STREAM.subarray(0, TOOL_CALL_STREAM.indexOf('"finish_reason":"tool_calls"') - 200) },
      {
        body:
          'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}\n\n' +
          'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}\n\n' +
          'data: [DONE]\n\n',
      },
    ];
    for (const [i, reply] of cases.entries()) {
      const body = bodyFor('chat', `will this be kept? (${i})`, true);
      upstream.reply(reply);
      const before = upstream.requests.length;
      assert.equal((await send(gw, 'chat', body)).cache, 'miss');
      // The failed answer was not kept: the same request goes upstream again, and this time is kept.
      upstream.reply(toolCallAnswer);
      assert.equal((await send(gw, 'chat', body)).cache, 'miss');
      assert.equal(upstream.requests.length - before, 2);
      assert.equal((await send(gw, 'chat', body)).cache, 'hit');
    }
  });

  it('keeps nothing of a stream its client left', async () => {
    const half = TOOL_CALL_STREAM.indexOf('"finish_reason":"tool_calls"') - 200;
    upstream.reply({ pieces: [TOOL_CALL_STREAM.subarray(0, half), TOOL_CALL_STREAM.subarray(half)], delayMs: 2_000 });
    const body = bodyFor('chat', 'left early', true);
    const controller = new AbortController();
    const res = await fetch(`${gw.url}${PATHS.chat}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    assert.equal(res.headers.get('x-sluice-cache'), 'miss');
    const reader = res.body?.getReader();
    await reader?.read();
    controller.abort();
    const left = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.equal(left.outcome, 'cancelled');
    upstream.reply(toolCallAnswer);
    assert.equal((await send(gw, 'chat', body)).cache, 'miss');
  });

  it('makes at most one upstream call for a stampede of 50 identical requests', async () => {
    upstream.reply((req) => ({ ...toolCallAnswer(req), headerDelayMs: 300 }));
    const before = upstream.requests.length;
    const body = bodyFor('chat', 'the stampede', true);
    const answers = await Promise.all(Array.from({ length: 50 }, () => send(gw, 'chat', body)));
    assert.equal(upstream.requests.length - before, 1);
    assert.ok(answers.every((a) => a.status === 200));
    assert.equal(answers.filter((a) => a.cache === 'miss').length, 1);
    assert.equal(answers.filter((a) => a.cache === 'hit').length, 49);
    const reference = content(answers[0].text);
    for (const a of answers) assert.deepEqual(content(a.text), reference);
  });

  it('lets the stampede go upstream on its own when the leader fails', async () => {
    let calls = 0;
    upstream.reply((req) => {
      calls++;
      return calls === 1
        ? { status: 503, headerDelayMs: 300, headers: { 'content-type': 'application/json' }, body: '{"error":{"message":"busy"}}' }
        : toolCallAnswer(req);
    });
    const body = bodyFor('chat', 'the failing leader', false);
    const answers = await Promise.all(Array.from({ length: 5 }, () => send(gw, 'chat', body)));
    assert.equal(answers.filter((a) => a.status === 200).length, 4);
    assert.ok(answers.every((a) => a.cache === 'miss'));
  });
});

describe('the response cache across projects', () => {
  const MASTER = 'sk-master-response-cache';
  let gw: TestGateway;
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;

  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway(cachedConfig(upstream.url, { auth: { master_key: MASTER } }));
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  it("never serves one project's answer to another", async () => {
    upstream.reply(toolCallAnswer);
    const a = await projectWithKey(gw.url, MASTER, 'cache-a');
    const b = await projectWithKey(gw.url, MASTER, 'cache-b');
    const body = bodyFor('chat', 'a secret of project a', false);
    const as = (key: string) => send(gw, 'chat', body, { authorization: `Bearer ${key}` });
    assert.equal((await as(a.key)).cache, 'miss');
    assert.equal((await as(a.key)).cache, 'hit');
    assert.equal((await as(b.key)).cache, 'miss');
    assert.equal((await as(b.key)).cache, 'hit');
    assert.equal(upstream.requests.length, 2);
    const listed = await adminCall(gw.url, MASTER, 'GET', '/v1/requests?limit=10');
    const outcomes = listed.body.data.map((r: { response_cache?: string }) => r.response_cache);
    assert.deepEqual(
      outcomes.filter(Boolean).sort((x: string, y: string) => x.localeCompare(y)),
      ['hit', 'hit', 'miss', 'miss'],
    );
  });
});

describe("the response cache of a project's endpoint", () => {
  const MASTER = 'sk-master-endpoint-cache';
  const PROJECT = 'cache-ep';
  let gw: TestGateway;
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  let key: string;

  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway(cachedConfig(upstream.url, { auth: { master_key: MASTER } }));
    key = (await projectWithKey(gw.url, MASTER, PROJECT)).key as string;
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  const admin = (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) => adminCall(gw.url, MASTER, method, path, body);
  /** A chat request as the project's key, through the endpoint (`/{project}/{endpoint}/v1`) or /v1. */
  async function ask(endpoint: string | null, body: unknown): Promise<Answer> {
    const path = endpoint === null ? PATHS.chat : `/${PROJECT}/${endpoint}${PATHS.chat}`;
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    return { status: res.status, cache: res.headers.get('x-sluice-cache'), requestId: res.headers.get('x-request-id') ?? '', text: await res.text() };
  }

  it('answers the second identical request from the cache through the endpoint only, until a PATCH turns it off', async () => {
    upstream.reply(toolCallAnswer);
    const created = await admin('POST', '/admin/endpoints', { project: PROJECT, name: 'faq', model: 'up/gpt-4o-mini', cache: { ttl_s: 60 } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.cache, { ttl_s: 60, max_bytes: 1_048_576 });
    // The same body both ways: provider/model resolves on the endpoint as on /v1, which no route or tier caches.
    const body = { ...bodyFor('chat', 'capital of Spain?', false), model: 'up/gpt-4o-mini' };
    const before = upstream.requests.length;
    const [miss, hit] = [await ask('faq', body), await ask('faq', body)];
    assert.deepEqual([miss.status, hit.status], [200, 200]);
    assert.deepEqual([miss.cache, hit.cache], ['miss', 'hit']);
    assert.ok(hit.text.includes('get_capital'));
    assert.equal((await ask(null, body)).cache, 'bypass');
    // A bare name means the endpoint's model, under the endpoint's cache too.
    assert.equal((await ask('faq', { ...body, model: 'llama-3.1-8b' })).cache, 'miss');
    assert.equal(upstream.requests.length - before, 3);
    assert.equal((await admin('GET', `/v1/requests/${hit.requestId}`)).body.response_cache, 'hit');

    const off = await admin('PATCH', `/admin/endpoints/${PROJECT}/faq`, { cache: null });
    assert.equal(off.status, 200, off.text);
    assert.equal(off.body.cache, null);
    const entry = (await admin('GET', '/admin/audit?limit=1')).body.data[0];
    assert.equal(entry.action, 'endpoint.update');
    assert.deepEqual([entry.before, entry.after], [{ cache: { ttl_s: 60, max_bytes: 1_048_576 } }, { cache: null }]);
    assert.deepEqual([(await ask('faq', body)).cache, (await ask('faq', body)).cache], ['bypass', 'bypass']);
    assert.equal(upstream.requests.length - before, 5);
  });

  it("keeps a route's cache over the endpoint's", async () => {
    upstream.reply(toolCallAnswer);
    // The endpoint keeps no answer (all are larger than 10 bytes); the route `cached` keeps them.
    const tiny = { project: PROJECT, name: 'tiny', model: 'up/gpt-4o-mini', cache: { ttl_s: 60, max_bytes: 10 } };
    assert.equal((await admin('POST', '/admin/endpoints', tiny)).status, 201);
    const body = bodyFor('chat', 'capital of Portugal?', false);
    assert.deepEqual([(await ask('tiny', body)).cache, (await ask('tiny', body)).cache], ['miss', 'hit']);
    const direct = { ...body, model: 'up/gpt-4o-mini' };
    assert.deepEqual([(await ask('tiny', direct)).cache, (await ask('tiny', direct)).cache], ['miss', 'miss']);
  });

  it('refuses a bad cache value on create and PATCH with a 400 naming the field', async () => {
    const refusals: [method: 'POST' | 'PATCH', path: string, body: Record<string, unknown>, param: string][] = [
      ['POST', '/admin/endpoints', { project: PROJECT, name: 'bad', model: 'up/gpt-4o-mini', cache: { ttl_s: 0 } }, 'cache.ttl_s'],
      ['POST', '/admin/endpoints', { project: PROJECT, name: 'bad', model: 'up/gpt-4o-mini', cache: null }, 'cache'],
      ['PATCH', `/admin/endpoints/${PROJECT}/tiny`, { cache: { ttl_s: 5, max_bytes: 1.5 } }, 'cache.max_bytes'],
      ['PATCH', `/admin/endpoints/${PROJECT}/tiny`, { cache: { max_bytes: 100 } }, 'cache.ttl_s'],
      ['PATCH', `/admin/endpoints/${PROJECT}/tiny`, { cache: { ttl_s: 5, ttl: 5 } }, 'cache.ttl'],
      ['PATCH', `/admin/endpoints/${PROJECT}/tiny`, { cache: 60 }, 'cache'],
    ];
    for (const [method, path, body, param] of refusals) {
      const res = await admin(method, path, body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.body.error.param, param, res.text);
    }
    const names = (await admin('GET', `/admin/endpoints?project=${PROJECT}`)).body.data.map((e: { name: string }) => e.name);
    assert.deepEqual(names, ['faq', 'tiny']);
  });
});

describe('the response cache and the limits', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: cachedConfig(url, {
      tiers: {
        tokens: { tokens_per_minute: 60, cache: { ttl_s: 60 } },
        requests: { requests_per_minute: 2, cache: { ttl_s: 60 } },
        budgeted: { budgets: [{ period: 'day', limit_usd: 0.05 }], cache: { ttl_s: 60 } },
      },
      // $0.001 a token: a budget of $0.05 is 50 tokens.
      pricing: { 'up/gpt-test': { input_mtok: 1000, output_mtok: 1000 } },
    }),
  }));
  before(() => speakAsTestCallers(gw));

  it('charges a hit to no token limit', async () => {
    upstream.reply(toolCallAnswer);
    const headers = { 'x-test-key': 'kt', 'x-test-tier': 'tokens' };
    const body = { ...bodyFor('chat', 'tokens', false), model: 'up/gpt-4o-mini' };
    const miss = await send(gw, 'chat', body, headers);
    assert.deepEqual([miss.status, miss.cache], [200, 'miss']);
    // Its 68 tokens are reconciled when its record is settled: the minute's 60 are spent.
    await requestRecord(gw, miss.requestId);
    assert.equal((await send(gw, 'chat', { ...body, messages: [{ role: 'user', content: 'other' }] }, headers)).status, 429);
    const hit = await send(gw, 'chat', body, headers);
    assert.deepEqual([hit.status, hit.cache], [200, 'hit']);
  });

  it('charges a hit to the request limit', async () => {
    upstream.reply(toolCallAnswer);
    const headers = { 'x-test-key': 'kr', 'x-test-tier': 'requests' };
    const body = { ...bodyFor('chat', 'requests', false), model: 'up/gpt-4o-mini' };
    const answers = [await send(gw, 'chat', body, headers), await send(gw, 'chat', body, headers), await send(gw, 'chat', body, headers)];
    assert.deepEqual(
      answers.map((a) => [a.status, a.cache]),
      [
        [200, 'miss'],
        [200, 'hit'],
        // Refused: answered neither from the cache nor upstream, so no x-sluice-cache.
        [429, null],
      ],
    );
  });

  it('keeps nothing of a stream its budget stopped', async () => {
    // 60 pieces of ~2 tokens: far past the 50 tokens the budget holds.
    const long = chatSse(Array.from({ length: 60 }, () => 'tokens. '));
    upstream.reply({ pieces: long.split(/(?<=\n\n)/), delayMs: 5 });
    const body = { model: 'up/gpt-test', messages: [{ role: 'user', content: 'Hi' }], stream: true };
    const stopped = await send(gw, 'chat', body, { 'x-test-key': 'kb', 'x-test-tier': 'budgeted' });
    assert.equal(stopped.cache, 'miss');
    assert.equal((await requestRecord(gw, stopped.requestId)).finish_reason, 'budget_exhausted');
    // Another key of the project, under the cache too: the answer was not kept.
    upstream.reply({ body: chatSse(['Hello']) });
    assert.equal((await send(gw, 'chat', body, { 'x-test-key': 'kb2', 'x-test-tier': 'requests' })).cache, 'miss');
  });
});

describe('the response cache in Redis, shared by two instances', { skip: !process.env.REDIS_URL && 'REDIS_URL is not set' }, () => {
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  const gateways: TestGateway[] = [];

  before(async () => {
    upstream = await startFakeUpstream();
    // A prefix of this run's own: nothing kept by an earlier run is found.
    const limits = { redis_url: process.env.REDIS_URL, redis_prefix: `sluice-test-cache-${process.pid}-${Date.now()}:` };
    for (let i = 0; i < 2; i++) {
      gateways.push(await startGateway(cachedConfig(upstream.url, { limits, response_cache: { backend: 'redis' } })));
    }
  });
  after(async () => {
    for (const gw of gateways) await gw.close();
    await upstream?.close();
  });

  it("answers on one instance from the other's answer", async () => {
    upstream.reply(toolCallAnswer);
    const body = bodyFor('chat', 'shared through redis', true);
    const miss = await send(gateways[0], 'chat', body);
    assert.equal(miss.cache, 'miss');
    // Kept once its record is settled, by a write to Redis after the answer: counted once written.
    for (let i = 0; i < 100 && !gateways[0].gateway.context.responseCache?.stats.bytes; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const hit = await send(gateways[1], 'chat', body);
    assert.equal(hit.cache, 'hit');
    assert.deepEqual(violations(hit.text, 'chat'), []);
    assert.deepEqual(content(hit.text), content(miss.text));
    assert.equal(upstream.requests.length, 1);
  });
});

import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type FakeUpstream, type RecordedRequest, startFakeUpstream, type UpstreamReply } from '../helpers/fake-upstream.ts';
import { adminCall, chatWith, projectWithKey } from '../helpers/admin-client.ts';
import { parseSse, rawStream, requestRecord, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { recordedFrames, recordedText } from './faults-support.ts';

/**
 * Routing's fault matrix: routes over two fake upstreams (`a`, `b`) and a closed port (`down`).
 * Each case has its own route over its own model ids, so the health one case leaves (a breaker,
 * a cooldown) is its own. For each: what the client got (the stream tap runs `sluice check` on
 * every stream), the attempts in the ledger (GET /v1/requests/{id}), the target that answered.
 */

const frames = recordedFrames();
const text = recordedText();
const body = frames.join('');

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

const route = (targets: string[], extra: Record<string, unknown> = {}) => ({
  targets: targets.map((model) => ({ model })),
  ...extra,
});

const chat = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content: 'hi' }],
  stream: true,
  ...extra,
});

const ok: UpstreamReply = { status: 200, headers: { 'content-type': 'text/event-stream' }, body };
const completion: UpstreamReply = {
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    id: 'chatcmpl-b',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 },
  }),
};
const sse = (text: string): UpstreamReply => ({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: text });

/** A request's JSON body (none for GET /v1/models). */
const bodyOf = (req: RecordedRequest) => (req.json ?? {}) as { model?: string; stream?: boolean };

/** What upstream `a` answers, per model id (the model names the case). */
const aReplies: Record<string, UpstreamReply> = {
  'm-429': {
    status: 429,
    headers: { 'retry-after': '30', 'content-type': 'application/json' },
    body: '{"error":{"message":"slow down","type":"rate_limit_error"}}',
  },
  'm-503': { status: 503, headers: { 'content-type': 'application/json' }, body: '{"error":{"message":"overloaded"}}' },
  'm-400': {
    status: 400,
    headers: { 'content-type': 'application/json' },
    body: '{"error":{"message":"bad temperature","type":"invalid_request_error","param":"temperature"}}',
  },
  'm-event': sse('data: {"error":{"message":"Provider overloaded","code":503}}\n\n'),
  'm-after': sse(`${frames.slice(0, 3).join('')}data: {"error":{"message":"Provider overloaded","code":503}}\n\n`),
  'm-slow': { ...ok, headerDelayMs: 3000 },
  // A whole answer whose headers come at once and whose body stalls: only a bound on the whole answer ends it.
  'm-slow-whole': { ...completion, body: undefined, pieces: [completion.body!.slice(0, 20), completion.body!.slice(20)], delaysMs: [0, 3000] },
  // Never answered in 0 ms, so the first answer leaves a TTFT score above an untried target's.
  'm-w1': { ...ok, headerDelayMs: 20 },
  'm-reset': { status: 200, headers: { 'content-type': 'text/event-stream' }, body: '', after: 'reset' },
  'm-reset-after': { status: 200, headers: { 'content-type': 'text/event-stream' }, pieces: frames.slice(0, 3), after: 'reset' },
};
let breakerFails = true;

/** The attempts of a record, as [provider, model, status, error code, fallback reason]. */
const attemptsOf = (record: Record<string, any>) =>
  (record.attempts as Record<string, unknown>[]).map((a) => [a.provider, a.model, a.status, a.error_code, a.fallback_reason]);

const contentOf = (sseText: string) =>
  parseSse(sseText)
    .frames.filter((f) => f.data !== '[DONE]' && !f.event)
    .map((f) => JSON.parse(f.data).choices?.[0]?.delta?.content ?? '')
    .join('');

describe('routes: fallback before the first token, health, stickiness', () => {
  let a: FakeUpstream;
  let b: FakeUpstream;
  let gw: TestGateway;
  const modelsAt = (up: FakeUpstream) => up.requests.map((r) => bodyOf(r).model);

  before(async () => {
    a = await startFakeUpstream();
    b = await startFakeUpstream();
    a.reply((req: RecordedRequest) => {
      const model = bodyOf(req).model;
      if (model === 'm-breaker') return breakerFails ? aReplies['m-503'] : ok;
      return (model && aReplies[model]) || ok;
    });
    // A whole answer when asked for one, else the recorded stream.
    b.reply((req: RecordedRequest) => {
      if (bodyOf(req).model === 'm-w2') return aReplies['m-w1'];
      return bodyOf(req).stream ? ok : completion;
    });
    const key = { api_key: 'sk-upstream' };
    gw = await startGateway({
      providers: {
        a: { base_url: `${a.url}/v1`, ...key, models: ['only-at-a', 'at-both'] },
        b: { base_url: `${b.url}/v1`, ...key, models: ['at-both'] },
        down: { base_url: `http://127.0.0.1:${await closedPort()}/v1`, ...key },
      },
      stream: { heartbeat_s: 0 },
      routing: { breaker_failures: 2, breaker_open_s: 1 },
      routes: {
        refused: route(['down/m-refused', 'b/m-refused']),
        limited: route(['a/m-429', 'b/m-429']),
        overloaded: route(['a/m-503', 'b/m-503']),
        bad: route(['a/m-400', 'b/m-400']),
        'error-event': route(['a/m-event', 'b/m-event']),
        'error-after': route(['a/m-after', 'b/m-after']),
        slow: { targets: [{ model: 'a/m-slow', ttft_timeout_s: 0.3 }, { model: 'b/m-slow' }] },
        'slow-whole': { targets: [{ model: 'a/m-slow-whole', timeout_s: 0.5 }, { model: 'b/m-slow-whole' }] },
        weighted: {
          strategy: 'weighted',
          targets: [
            { model: 'a/m-w1', weight: 3 },
            { model: 'b/m-w2', weight: 1 },
          ],
        },
        reset: route(['a/m-reset', 'b/m-reset']),
        'reset-after': route(['a/m-reset-after', 'b/m-reset-after']),
        breaker: route(['a/m-breaker', 'b/m-breaker']),
        tuned: { targets: [{ model: 'down/m-params' }, { model: 'b/m-params', params: { temperature: 0.1, max_tokens: 64 } }] },
        sticky: { strategy: 'weighted', sticky: true, targets: [{ model: 'a/m-s1' }, { model: 'b/m-s2' }] },
      },
    });
  });
  after(async () => {
    await gw.close();
    await a.close();
    await b.close();
  });

  async function stream(model: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    const res = await rawStream(gw.url, chat(model, extra), headers);
    const requestId = res.headers.get('x-request-id') ?? '';
    return { ...res, requestId, record: await requestRecord(gw, requestId) };
  }

  it('connect refused: the next target answers; the ledger has both attempts', async () => {
    const res = await stream('refused');
    assert.equal(res.status, 200);
    assert.equal(contentOf(res.text), text);
    assert.deepEqual([res.record.provider, res.record.model, res.record.requested_model], ['b', 'm-refused', 'refused']);
    assert.deepEqual(attemptsOf(res.record), [
      ['down', 'm-refused', null, 'upstream_connection_error', 'connection_error'],
      ['b', 'm-refused', 200, null, null],
    ]);
    // The client is answered as the model it named.
    assert.ok(
      parseSse(res.text)
        .frames.slice(0, -1)
        .every((f) => JSON.parse(f.data).model === 'refused'),
    );
  });

  it('the accounting profile announces the switch before the first content frame; usage_start names the target used', async () => {
    const res = await stream('refused', {}, { 'x-sluice-profile': 'accounting' });
    const events = parseSse(res.text).frames.map((f) => f.event ?? JSON.parse(f.data === '[DONE]' ? '{}' : f.data).type);
    assert.deepEqual(events.slice(0, 3), ['usage_start', 'provider_fallback', 'content']);
    const [start, fallback] = parseSse(res.text)
      .frames.slice(0, 2)
      .map((f) => JSON.parse(f.data));
    assert.deepEqual([start.provider, start.model], ['b', 'm-refused']);
    assert.deepEqual(
      [fallback.from_provider, fallback.from_model, fallback.provider, fallback.model, fallback.reason],
      ['down', 'm-refused', 'b', 'm-refused', 'connection_error'],
    );
  });

  it('the openai profile sends no fallback frame: the stream is the one an unrouted request gets', async () => {
    const res = await stream('refused');
    assert.ok(!res.text.includes('provider_fallback'));
  });

  it('429 with Retry-After: the next target answers, and the first is skipped while it cools down', async () => {
    const first = await stream('limited');
    assert.equal(contentOf(first.text), text);
    assert.deepEqual(attemptsOf(first.record), [
      ['a', 'm-429', 429, 'rate_limit_exceeded', 'rate_limited'],
      ['b', 'm-429', 200, null, null],
    ]);
    const second = await stream('limited');
    assert.deepEqual(attemptsOf(second.record), [['b', 'm-429', 200, null, null]]);
    assert.equal(modelsAt(a).filter((m) => m === 'm-429').length, 1, 'a was asked once');
    const health = (await (await fetch(`${gw.url}/healthz/providers`)).json()) as { data: Record<string, unknown>[] };
    const limited = health.data.find((t) => t.target === 'a/m-429');
    assert.ok(limited?.cooldown_until, 'the cooldown is visible');
  });

  it('503: the next target answers', async () => {
    const res = await stream('overloaded');
    assert.equal(contentOf(res.text), text);
    assert.deepEqual(attemptsOf(res.record)[0], ['a', 'm-503', 503, 'upstream_overloaded', 'overloaded']);
    assert.equal(res.record.provider, 'b');
  });

  it('a 503 without stream: the same fallback for a whole answer', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chat('overloaded', { stream: false })),
    });
    assert.equal(res.status, 200);
    const json = (await res.json()) as { model: string; choices: { message: { content: string } }[] };
    assert.equal(json.model, 'overloaded');
    assert.equal(json.choices[0].message.content, text);
    const record = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.deepEqual(
      attemptsOf(record).map((x) => x[0]),
      ['a', 'b'],
    );
  });

  it('a 400 is not retried: the client gets it, and the next target is never asked', async () => {
    const res = await stream('bad');
    assert.equal(res.status, 400);
    assert.equal(JSON.parse(res.text).error.param, 'temperature');
    assert.deepEqual(attemptsOf(res.record), [['a', 'm-400', 400, 'invalid_request', null]]);
    assert.ok(!modelsAt(b).includes('m-400'));
  });

  it('an error event before any output (a 200 stream that fails first): the next target answers', async () => {
    const res = await stream('error-event');
    assert.equal(contentOf(res.text), text);
    assert.deepEqual(attemptsOf(res.record), [
      // The error event came inside a 200 stream: that is the status recorded.
      ['a', 'm-event', 200, 'upstream_overloaded', 'overloaded'],
      ['b', 'm-event', 200, null, null],
    ]);
  });

  it('an error after output: an error frame, never a switch', async () => {
    const res = await stream('error-after');
    const { frames: got } = parseSse(res.text);
    assert.equal(got.at(-1)?.data, '[DONE]');
    assert.equal(JSON.parse(got.at(-2)?.data ?? '{}').error.code, 'upstream_overloaded');
    assert.equal(contentOf(res.text), recordedText(frames.slice(0, 3)), 'the output so far, from the one target');
    assert.deepEqual(attemptsOf(res.record), [['a', 'm-after', 200, null, null]]);
    assert.equal(res.record.error.code, 'upstream_overloaded');
    assert.ok(!modelsAt(b).includes('m-after'));
  });

  it('no first token within the TTFT timeout: the next target answers', async () => {
    const res = await stream('slow');
    assert.equal(contentOf(res.text), text);
    assert.deepEqual(attemptsOf(res.record), [
      ['a', 'm-slow', null, 'upstream_timeout', 'ttft_timeout'],
      ['b', 'm-slow', 200, null, null],
    ]);
  });

  it("a whole answer not complete within the target's timeout_s: the next target answers", async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chat('slow-whole', { stream: false })),
    });
    assert.equal(res.status, 200);
    const json = (await res.json()) as { id: string; choices: { message: { content: string } }[] };
    assert.equal(json.choices[0].message.content, text);
    const record = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.deepEqual(attemptsOf(record), [
      // A whole answer's status is recorded with the answer, which never came.
      ['a', 'm-slow-whole', null, 'upstream_timeout', 'timeout'],
      ['b', 'm-slow-whole', 200, null, null],
    ]);
    assert.equal(record.provider, 'b');
  });

  it('a reset before any output falls back; a reset after output is an error frame', async () => {
    const before = await stream('reset');
    assert.equal(contentOf(before.text), text);
    assert.deepEqual(
      attemptsOf(before.record).map((x) => [x[0], x[4]]),
      [
        ['a', attemptsOf(before.record)[0][4]],
        ['b', null],
      ],
    );
    assert.ok(attemptsOf(before.record)[0][4], 'the reset was a reason to fall back');
    const afterOutput = await stream('reset-after');
    assert.ok(afterOutput.text.endsWith('data: [DONE]\n\n'));
    assert.equal(afterOutput.record.outcome, 'error');
    assert.deepEqual(
      attemptsOf(afterOutput.record).map((x) => x[0]),
      ['a'],
    );
    assert.ok(!modelsAt(b).includes('m-reset-after'));
  });

  it('a breaker opens after repeated failures, skips its target, then lets a probe through and closes', async () => {
    breakerFails = true;
    for (let i = 0; i < 2; i++) {
      const res = await stream('breaker');
      assert.deepEqual(
        attemptsOf(res.record).map((x) => x[0]),
        ['a', 'b'],
      );
    }
    const health = async () =>
      ((await (await fetch(`${gw.url}/healthz/providers`)).json()) as { data: Record<string, unknown>[] }).data.find(
        (t) => t.target === 'a/m-breaker',
      );
    assert.equal((await health())?.breaker, 'open');
    const skipped = await stream('breaker');
    assert.deepEqual(
      attemptsOf(skipped.record).map((x) => x[0]),
      ['b'],
      'the open target is not tried',
    );
    breakerFails = false;
    await sleep(1100); // breaker_open_s: 1
    assert.equal((await health())?.breaker, 'half-open');
    const probe = await stream('breaker');
    assert.deepEqual(attemptsOf(probe.record), [['a', 'm-breaker', 200, null, null]]);
    assert.equal((await health())?.breaker, 'closed');
  });

  it("a target's params replace the client's", async () => {
    const res = await stream('tuned', { temperature: 1.5, max_tokens: 999 });
    assert.equal(res.record.provider, 'b');
    const sent = b.requests.findLast((r) => bodyOf(r).model === 'm-params')?.json as Record<string, unknown>;
    assert.deepEqual([sent.temperature, sent.max_tokens], [0.1, 64]);
  });

  it("the request's own fallbacks (models, as OpenRouter takes them) are tried after its model, and not sent upstream", async () => {
    const res = await stream('down/m-own', { models: ['b/m-own'] });
    assert.equal(contentOf(res.text), text);
    assert.deepEqual(
      attemptsOf(res.record).map((x) => x[0]),
      ['down', 'b'],
    );
    assert.equal(res.record.requested_model, 'down/m-own');
    const sent = b.requests.findLast((r) => bodyOf(r).model === 'm-own')?.json as Record<string, unknown>;
    assert.equal(sent.models, undefined);
  });

  it('a bad models field is a 400 naming it', async () => {
    const res = await rawStream(gw.url, chat('b/x', { models: 'b/y' }));
    assert.equal(res.status, 400);
    assert.equal(JSON.parse(res.text).error.param, 'models');
  });

  it('a bare model name goes to the one provider that serves it; an ambiguous one is a 404 listing them', async () => {
    const res = await stream('only-at-a');
    assert.deepEqual([res.record.provider, res.record.model], ['a', 'only-at-a']);
    const ambiguous = await rawStream(gw.url, chat('at-both'));
    assert.equal(ambiguous.status, 404);
    const error = JSON.parse(ambiguous.text).error;
    assert.equal(error.code, 'model_not_found');
    assert.match(error.message, /a\/at-both, b\/at-both/);
  });

  it('GET /v1/models lists the routes beside the aliases', async () => {
    const ids = (await gw.client.models.list()).data.map((m) => m.id);
    assert.ok(ids.includes('refused') && ids.includes('sticky'));
  });

  it('weighted: both targets receive requests', async () => {
    // The first request goes to a target drawn by weight; its TTFT score then loses the power of
    // two choices to the untried target's, so the second goes to the other whatever the draw.
    // (The spread by weight itself is order.ts's unit test, over seeded draws.)
    const providers: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await stream('weighted');
      assert.equal(contentOf(res.text), text);
      providers.push(res.record.provider);
    }
    assert.deepEqual(new Set(providers), new Set(['a', 'b']), `targets used: ${providers.join(', ')}`);
    assert.ok(modelsAt(a).includes('m-w1') && modelsAt(b).includes('m-w2'));
  });

  it('sticky: the same prompt_cache_key goes to the same target', async () => {
    const picks = new Set<string>();
    for (let i = 0; i < 4; i++) picks.add((await stream('sticky', { prompt_cache_key: 'conversation-7' })).record.provider);
    assert.equal(picks.size, 1);
    const spread = new Set<string>();
    for (let i = 0; i < 12; i++) spread.add((await stream('sticky', { prompt_cache_key: `conversation-${i}` })).record.provider);
    assert.equal(spread.size, 2, 'different keys spread over both targets');
  });
});

describe('routes with keys: endpoints, allowed models, the Responses surface', () => {
  const MASTER = 'sk-master-routing-test';
  let b: FakeUpstream;
  let gw: TestGateway;
  let key: Record<string, any>;

  before(async () => {
    b = await startFakeUpstream();
    b.reply((req: RecordedRequest) => (bodyOf(req).stream ? ok : completion));
    gw = await startGateway({
      auth: { master_key: MASTER },
      providers: {
        b: { base_url: `${b.url}/v1`, api_key: 'sk-upstream' },
        down: { base_url: `http://127.0.0.1:${await closedPort()}/v1`, api_key: 'sk-upstream' },
      },
      stream: { heartbeat_s: 0 },
      routes: { chain: route(['down/m-chain', 'b/m-chain']) },
    });
    key = await projectWithKey(gw.url, MASTER, 'proj_routes', { models: ['chain'] });
    const created = await adminCall(gw.url, MASTER, 'POST', '/admin/endpoints', { project: 'proj_routes', name: 'assistant', model: 'chain' });
    assert.equal(created.status, 201, created.text);
  });
  after(async () => {
    await gw.close();
    await b.close();
  });

  const record = async (requestId: string) => (await adminCall(gw.url, MASTER, 'GET', `/v1/requests/${requestId}`)).body;

  it("an endpoint's default model may be a route: a bare name there goes through it, fallback included", async () => {
    const res = await chatWith(gw.url, key.key, { model: 'llama-3.1-8b' }, '/proj_routes/assistant/v1/chat/completions');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.model, 'llama-3.1-8b');
    const row = await record(res.requestId);
    assert.deepEqual(
      attemptsOf(row).map((x) => x[0]),
      ['down', 'b'],
    );
  });

  it("a key allowed a route may use it, but the request's own models cannot reach around its list", async () => {
    const allowed = await chatWith(gw.url, key.key, { model: 'chain' });
    assert.equal(allowed.status, 200, allowed.text);
    const around = await chatWith(gw.url, key.key, { model: 'chain', models: ['b/m-other'] });
    assert.equal(around.status, 403);
    assert.equal(around.body.error.code, 'model_not_allowed');
  });

  it("a Responses request's own models are its fallbacks too", async () => {
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${MASTER}` },
      body: JSON.stringify({ model: 'down/m-resp', models: ['b/m-resp'], input: 'hi' }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    const json = (await res.json()) as { model: string; status: string };
    assert.deepEqual([json.model, json.status], ['down/m-resp', 'completed']);
    const row = await record(res.headers.get('x-request-id') ?? '');
    assert.deepEqual(
      attemptsOf(row).map((x) => x[0]),
      ['down', 'b'],
    );
  });

  it('the Responses surface falls back the same way, before its first event', async () => {
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${MASTER}` },
      body: JSON.stringify({ model: 'chain', input: 'hi', stream: true }),
    });
    const body = await res.text();
    assert.equal(res.status, 200);
    assert.match(body, /event: response\.completed/);
    assert.ok(!body.includes('provider_fallback'));
    const row = await record(res.headers.get('x-request-id') ?? '');
    assert.deepEqual(
      attemptsOf(row).map((x) => x[0]),
      ['down', 'b'],
    );
    assert.equal(row.surface, 'responses');
  });
});

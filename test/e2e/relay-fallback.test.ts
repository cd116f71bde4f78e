import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { anthropicStreamBody } from '../helpers/anthropic-fixtures.ts';
import { exceptionMessage } from '../helpers/bedrock-fixtures.ts';
import { type FakeUpstream, type RecordedRequest, startFakeUpstream, type UpstreamReply } from '../helpers/fake-upstream.ts';
import { geminiStreamBody } from '../helpers/gemini-fixtures.ts';
import { parseSse, rawStream, requestRecord, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { relayBodies } from '../helpers/responses-recordings.ts';
import { recordedFrames, recordedText } from './faults-support.ts';

/**
 * Routing on the relayed surfaces (issue 12): /v1/messages relayed to Anthropic and /v1/responses
 * relayed to upstreams with `responses_api: true` fall back before their first output, to targets
 * relayed the same way only; a fallback after the heartbeats and the 200 went out; the 200
 * streams whose first event is an error (Anthropic's `event: error`, Bedrock's exception); bare
 * model names found in the pricing registry. The stream tap checks every stream's frames.
 */

const SSE = { 'content-type': 'text/event-stream' };
const JSON_TYPE = { 'content-type': 'application/json' };
const sse = (body: string | Buffer): UpstreamReply => ({ status: 200, headers: SSE, body });

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

const bodyOf = (req: RecordedRequest) => (req.json ?? {}) as { model?: string; stream?: boolean };
const modelsAt = (up: FakeUpstream) => up.requests.map((r) => bodyOf(r).model);

/** The attempts of a record, as [provider, model, status, error code, fallback reason]. */
const attemptsOf = (record: Record<string, any>) =>
  ((record.attempts ?? []) as Record<string, unknown>[]).map((a) => [a.provider, a.model, a.status, a.error_code, a.fallback_reason]);

const route = (targets: string[]) => ({ targets: targets.map((model) => ({ model })) });

const ANTHROPIC_TEXT = 'anthropic/text-haiku45.sse';
const overloadedEvent = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
const anthropicMessage = {
  id: 'msg_b',
  type: 'message',
  role: 'assistant',
  model: 'claude-b',
  content: [{ type: 'text', text: 'Hello from b' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 3, output_tokens: 4 },
};

const overloaded: UpstreamReply = {
  status: 529,
  headers: JSON_TYPE,
  body: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
};

/** Anthropic's answers, per model id (the model names the case; each route has its own, so its health is its own). */
const anthropicReplies: Record<string, UpstreamReply> = {
  'c-529': overloaded,
  'c-529-mixed': overloaded,
  'c-529-tuned': overloaded,
  'c-429': {
    status: 429,
    headers: { ...JSON_TYPE, 'retry-after': '30' },
    body: '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}',
  },
  'c-event': sse(overloadedEvent),
  'c-slow': { ...sse(anthropicStreamBody(ANTHROPIC_TEXT)), headerDelayMs: 3000 },
  // Answers at once, then says nothing while sluice's heartbeats go out, then fails before any output.
  'c-late-error': { status: 200, headers: SSE, pieces: [': upstream ping\n\n', overloadedEvent], delaysMs: [0, 700] },
};

const messagesBody = (model: string, stream = true) => ({
  model,
  max_tokens: 64,
  messages: [{ role: 'user', content: 'hi' }],
  stream,
});

/** The text of a Messages stream's content_block_delta frames. */
const messagesText = (text: string) =>
  parseSse(text)
    .frames.filter((f) => f.event === 'content_block_delta')
    .map((f) => JSON.parse(f.data).delta?.text ?? '')
    .join('');

describe('/v1/messages relayed to Anthropic falls back to the next Anthropic target', () => {
  let anthropic: FakeUpstream;
  let b: FakeUpstream;
  let gw: TestGateway;
  const recordedAnswer = messagesText(anthropicStreamBody(ANTHROPIC_TEXT).toString('utf8'));

  before(async () => {
    anthropic = await startFakeUpstream();
    b = await startFakeUpstream();
    anthropic.reply((req) => {
      const { model, stream } = bodyOf(req);
      const reply = model ? anthropicReplies[model] : undefined;
      if (reply) return reply;
      return stream ? sse(anthropicStreamBody(ANTHROPIC_TEXT)) : { status: 200, headers: JSON_TYPE, body: JSON.stringify(anthropicMessage) };
    });
    b.reply({ status: 500, headers: JSON_TYPE, body: '{"error":{"message":"b must not be asked"}}' });
    gw = await startGateway(
      {
        providers: { b: { base_url: `${b.url}/v1`, api_key: 'sk-upstream' } },
        stream: { heartbeat_s: 0.2 },
        routes: {
          overloaded: route(['anthropic/c-529', 'anthropic/claude-b']),
          limited: route(['anthropic/c-429', 'anthropic/claude-b']),
          'error-event': route(['anthropic/c-event', 'anthropic/claude-b']),
          slow: { targets: [{ model: 'anthropic/c-slow', ttft_timeout_s: 0.3 }, { model: 'anthropic/claude-b' }] },
          'late-error': route(['anthropic/c-late-error', 'anthropic/claude-b']),
          mixed: route(['anthropic/c-529-mixed', 'b/c-529-mixed']),
          tuned: { targets: [{ model: 'anthropic/c-529-tuned' }, { model: 'anthropic/claude-tuned', params: { temperature: 0.2, max_tokens: 32 } }] },
        },
      },
      { ANTHROPIC_API_KEY: 'sk-ant-e2e', ANTHROPIC_BASE_URL: anthropic.url },
    );
  });
  after(async () => {
    await gw.close();
    await anthropic.close();
    await b.close();
  });

  async function messages(model: string, stream = true) {
    const res = await rawStream(gw.url, messagesBody(model, stream), {}, '/v1/messages');
    const requestId = res.headers.get('x-request-id') ?? '';
    return { ...res, record: await requestRecord(gw, requestId) };
  }

  it('529 overloaded: the next target answers, relayed as it came; the ledger has both attempts', async () => {
    const res = await messages('overloaded');
    assert.equal(res.status, 200);
    assert.equal(messagesText(res.text), recordedAnswer);
    assert.deepEqual([res.record.provider, res.record.model, res.record.requested_model], ['anthropic', 'claude-b', 'overloaded']);
    assert.deepEqual(attemptsOf(res.record), [
      ['anthropic', 'c-529', 529, 'upstream_overloaded', 'overloaded'],
      ['anthropic', 'claude-b', 200, null, null],
    ]);
  });

  it('a whole answer (no stream) falls back the same way', async () => {
    const res = await messages('overloaded', false);
    assert.equal(res.status, 200, res.text);
    assert.equal(JSON.parse(res.text).content[0].text, 'Hello from b');
    assert.deepEqual(
      attemptsOf(res.record).map((x) => [x[1], x[4]]),
      [
        ['c-529', 'overloaded'],
        ['claude-b', null],
      ],
    );
  });

  it('429 with Retry-After: the next target answers and the first cools down (the health learns from relayed traffic)', async () => {
    const first = await messages('limited');
    assert.equal(messagesText(first.text), recordedAnswer);
    assert.deepEqual(attemptsOf(first.record)[0], ['anthropic', 'c-429', 429, 'rate_limit_exceeded', 'rate_limited']);
    const second = await messages('limited');
    assert.deepEqual(
      attemptsOf(second.record).map((x) => x[1]),
      ['claude-b'],
    );
    assert.equal(modelsAt(anthropic).filter((m) => m === 'c-429').length, 1, 'the cooling target was not asked again');
    const health = (await (await fetch(`${gw.url}/healthz/providers`)).json()) as { data: Record<string, unknown>[] };
    assert.ok(health.data.find((t) => t.target === 'anthropic/c-429')?.cooldown_until);
  });

  it("a 200 stream whose first event is Anthropic's overloaded_error: the next target answers, the error never reaches the client", async () => {
    const res = await messages('error-event');
    assert.equal(res.status, 200);
    assert.ok(!res.text.includes('overloaded_error'), res.text);
    assert.equal(messagesText(res.text), recordedAnswer);
    assert.deepEqual(attemptsOf(res.record), [
      // The status Anthropic answered (the error came inside its 200 stream), not the 529 its type stands for.
      ['anthropic', 'c-event', 200, 'upstream_overloaded', 'overloaded'],
      ['anthropic', 'claude-b', 200, null, null],
    ]);
  });

  it('no first output within the TTFT timeout: the next target answers', async () => {
    const res = await messages('slow');
    assert.equal(messagesText(res.text), recordedAnswer);
    assert.deepEqual(attemptsOf(res.record)[0], ['anthropic', 'c-slow', null, 'upstream_timeout', 'ttft_timeout']);
  });

  it('after the heartbeats and the 200 went out, an error before any output still falls back', async () => {
    const res = await messages('late-error');
    assert.equal(res.status, 200);
    assert.ok(
      parseSse(res.text).frames.some((f) => f.event === 'ping'),
      'heartbeats went out first',
    );
    assert.ok(!res.text.includes('overloaded_error'));
    assert.equal(messagesText(res.text), recordedAnswer);
    assert.deepEqual(
      attemptsOf(res.record).map((x) => [x[1], x[4]]),
      [
        ['c-late-error', 'overloaded'],
        ['claude-b', null],
      ],
    );
  });

  it("a target's params replace the relayed body's, under the Messages API's names", async () => {
    const res = await messages('tuned');
    assert.equal(res.status, 200);
    const sent = anthropic.requests.findLast((r) => bodyOf(r).model === 'claude-tuned')?.json as Record<string, unknown>;
    assert.deepEqual([sent.temperature, sent.max_tokens, sent.stream], [0.2, 32, true]);
  });

  it('a later target of another kind is not tried: the relay cannot pass its answer on byte for byte', async () => {
    const res = await messages('mixed');
    assert.equal(res.status, 529);
    assert.equal(JSON.parse(res.text).error.type, 'overloaded_error');
    assert.equal(b.requests.length, 0);
    assert.equal(res.record.provider, 'anthropic');
  });
});

/** The Responses recordings: a whole text answer, and one that fails (error, response.failed) before any output. */
const responsesText = relayBodies('openai-responses/text-gpt41-nano.sse')[0];
const responsesFailed = relayBodies('openai-responses/failed-insufficient-quota.jsonl')[0];

describe('/v1/responses relayed (responses_api: true) falls back to the next relayed target', () => {
  let ra: FakeUpstream;
  let rb: FakeUpstream;
  let plain: FakeUpstream;
  let gw: TestGateway;
  const completed = JSON.parse(parseSse(responsesText).frames.find((f) => f.event === 'response.completed')?.data ?? '{}').response as Record<
    string,
    unknown
  >;

  before(async () => {
    ra = await startFakeUpstream();
    rb = await startFakeUpstream();
    plain = await startFakeUpstream();
    ra.reply((req) =>
      bodyOf(req).model === 'r-failed'
        ? sse(responsesFailed)
        : { status: 503, headers: JSON_TYPE, body: '{"error":{"message":"overloaded","type":"server_error"}}' },
    );
    rb.reply((req) => (bodyOf(req).stream ? sse(responsesText) : { status: 200, headers: JSON_TYPE, body: JSON.stringify(completed) }));
    plain.reply({ status: 500, headers: JSON_TYPE, body: '{"error":{"message":"plain must not be asked"}}' });
    const relayed = { api_key: 'sk-upstream', responses_api: true };
    gw = await startGateway({
      providers: {
        ra: { base_url: `${ra.url}/v1`, ...relayed },
        rb: { base_url: `${rb.url}/v1`, ...relayed },
        down: { base_url: `http://127.0.0.1:${await closedPort()}/v1`, ...relayed },
        plain: { base_url: `${plain.url}/v1`, api_key: 'sk-upstream' },
      },
      stream: { heartbeat_s: 0 },
      routes: {
        refused: route(['down/r-refused', 'rb/r-refused']),
        overloaded: route(['ra/r-503', 'rb/r-503']),
        failed: route(['ra/r-failed', 'rb/r-failed']),
        mixed: route(['ra/r-503-mixed', 'plain/r-503-mixed']),
      },
    });
  });
  after(async () => {
    await gw.close();
    await ra.close();
    await rb.close();
    await plain.close();
  });

  async function respond(model: string, stream = true) {
    const res = await rawStream(gw.url, { model, input: 'hi', stream }, {}, '/v1/responses');
    return { ...res, record: await requestRecord(gw, res.headers.get('x-request-id') ?? '') };
  }

  /** The named events of a stream (sluice's closing `[DONE]` aside). */
  const eventsOf = (text: string) => parseSse(text).frames.flatMap((f) => (f.event ? [f.event] : []));

  it('connect refused: the next relayed target answers, its events as it sent them', async () => {
    const res = await respond('refused');
    assert.equal(res.status, 200);
    assert.deepEqual(eventsOf(res.text), eventsOf(responsesText));
    assert.deepEqual(attemptsOf(res.record), [
      ['down', 'r-refused', null, 'upstream_connection_error', 'connection_error'],
      ['rb', 'r-refused', 200, null, null],
    ]);
  });

  it('503: the next relayed target answers, stream or not', async () => {
    const streamed = await respond('overloaded');
    assert.deepEqual(eventsOf(streamed.text), eventsOf(responsesText));
    assert.deepEqual(
      attemptsOf(streamed.record).map((x) => [x[0], x[2], x[4]]),
      [
        ['ra', 503, 'overloaded'],
        ['rb', 200, null],
      ],
    );
    const whole = await respond('overloaded', false);
    assert.equal(whole.status, 200, whole.text);
    assert.equal(JSON.parse(whole.text).status, 'completed');
    assert.deepEqual(
      attemptsOf(whole.record).map((x) => x[0]),
      ['ra', 'rb'],
    );
  });

  it('an error and response.failed before any output: the next target answers; the client sees one response', async () => {
    const res = await respond('failed');
    assert.equal(res.status, 200);
    assert.deepEqual(eventsOf(res.text), eventsOf(responsesText), 'nothing of the failed attempt, not even its response.created');
    assert.ok(!res.text.includes('insufficient_quota'));
    assert.deepEqual(
      attemptsOf(res.record).map((x) => [x[0], x[3], x[4]]),
      [
        ['ra', 'insufficient_quota', 'upstream_error'],
        ['rb', null, null],
      ],
    );
  });

  it('a target that does not relay the Responses API is not tried', async () => {
    const res = await respond('mixed');
    assert.equal(res.status, 503);
    assert.equal(plain.requests.length, 0);
  });
});

const frames = recordedFrames();
const text = recordedText();
const contentOf = (sseText: string) =>
  parseSse(sseText)
    .frames.filter((f) => f.data !== '[DONE]' && !f.event)
    .map((f) => JSON.parse(f.data).choices?.[0]?.delta?.content ?? '')
    .join('');
const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }], stream: true });

describe('translated streams: a fallback after heartbeats, and Bedrock exceptions before output', () => {
  let bedrock: FakeUpstream;
  let a: FakeUpstream;
  let b: FakeUpstream;
  let gw: TestGateway;
  const lateError = 'data: {"error":{"message":"Provider overloaded","code":503}}\n\n';

  before(async () => {
    bedrock = await startFakeUpstream();
    a = await startFakeUpstream();
    b = await startFakeUpstream();
    bedrock.reply({
      status: 200,
      headers: { 'content-type': 'application/vnd.amazon.eventstream' },
      body: exceptionMessage('throttlingException', 'Too many requests, please wait before trying again.'),
    });
    // Headers at once, then silence past several heartbeats, then an error before any output.
    a.reply({ status: 200, headers: SSE, pieces: [': upstream ping\n\n', lateError], delaysMs: [0, 700] });
    b.reply((req) =>
      bodyOf(req).model === 'm-late-b' ? { status: 200, headers: SSE, pieces: [': ping\n\n', lateError], delaysMs: [0, 700] } : sse(frames.join('')),
    );
    gw = await startGateway(
      {
        providers: {
          a: { base_url: `${a.url}/v1`, api_key: 'sk-upstream' },
          b: { base_url: `${b.url}/v1`, api_key: 'sk-upstream' },
        },
        stream: { heartbeat_s: 0.2 },
        routes: {
          late: route(['a/m-late', 'b/m-late']),
          'all-late': route(['a/m-late', 'b/m-late-b']),
          throttled: route(['bedrock/us.anthropic.claude-sonnet-4-20250514-v1:0', 'b/m-bedrock']),
        },
      },
      {
        AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
        AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
        AWS_REGION: 'us-east-1',
        AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.url,
      },
    );
  });
  after(async () => {
    await gw.close();
    await bedrock.close();
    await a.close();
    await b.close();
  });

  async function stream(model: string, headers: Record<string, string> = {}) {
    const res = await rawStream(gw.url, chat(model), headers);
    return { ...res, record: await requestRecord(gw, res.headers.get('x-request-id') ?? '') };
  }

  it('heartbeats and the 200 went out, then the first target failed before output: the next answers, announced by provider_fallback', async () => {
    const res = await stream('late', { 'x-sluice-profile': 'accounting' });
    assert.equal(res.status, 200);
    const { frames: got, comments } = parseSse(res.text);
    assert.ok(comments.length > 0, 'heartbeats went out before the fallback');
    const types = got.map((f) => f.event ?? JSON.parse(f.data === '[DONE]' ? '{}' : f.data).type);
    assert.deepEqual(types.slice(0, 3), ['usage_start', 'provider_fallback', 'content']);
    const fallback = JSON.parse(got[1].data);
    assert.deepEqual([fallback.from_provider, fallback.provider, fallback.reason], ['a', 'b', 'overloaded']);
    assert.equal(contentOf(res.text), text);
    assert.deepEqual(
      attemptsOf(res.record).map((x) => [x[0], x[4]]),
      [
        ['a', 'overloaded'],
        ['b', null],
      ],
    );
  });

  it('every target fails after the 200 went out: the error frame and [DONE], never a second HTTP status', async () => {
    const res = await stream('all-late');
    assert.equal(res.status, 200);
    const { frames: got } = parseSse(res.text);
    assert.equal(got.at(-1)?.data, '[DONE]');
    assert.equal(JSON.parse(got.at(-2)?.data ?? '{}').error.code, 'upstream_overloaded');
    assert.equal(contentOf(res.text), '');
    assert.deepEqual(
      attemptsOf(res.record).map((x) => [x[0], x[4]]),
      [
        ['a', 'overloaded'],
        ['b', null],
      ],
    );
  });

  it('a 200 Bedrock stream whose first message is a throttlingException: the next target answers', async () => {
    const res = await stream('throttled');
    assert.equal(res.status, 200);
    assert.equal(contentOf(res.text), text);
    assert.deepEqual(
      attemptsOf(res.record).map((x) => [x[0], x[2], x[4]]),
      [
        // The exception came inside a 200 event stream.
        ['bedrock', 200, 'rate_limited'],
        ['b', 200, null],
      ],
    );
  });
});

describe('bare model names from the pricing registry', () => {
  let up: FakeUpstream;
  let other: FakeUpstream;
  before(async () => {
    up = await startFakeUpstream();
    other = await startFakeUpstream();
  });
  after(async () => {
    await up.close();
    await other.close();
  });

  it('claude-sonnet-4-5 with only Anthropic configured goes to Anthropic', async () => {
    up.reply(sse(anthropicStreamBody(ANTHROPIC_TEXT)));
    const gw = await startGateway({ stream: { heartbeat_s: 0 } }, { ANTHROPIC_API_KEY: 'sk-ant-e2e', ANTHROPIC_BASE_URL: up.url });
    try {
      const res = await rawStream(gw.url, chat('claude-sonnet-4-5'));
      assert.equal(res.status, 200, res.text);
      const record = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
      assert.deepEqual([record.provider, record.model, record.requested_model], ['anthropic', 'claude-sonnet-4-5', 'claude-sonnet-4-5']);
      assert.equal(bodyOf(up.requests.at(-1) as RecordedRequest).model, 'claude-sonnet-4-5');
    } finally {
      await gw.close();
    }
  });

  it("the Responses reference's own example model, claude-sonnet-4-20250514, resolves as a bare name like claude-sonnet-4-5 (was: 404)", async () => {
    up.reply(sse(anthropicStreamBody(ANTHROPIC_TEXT)));
    // Bedrock's pricing also matches the name (to its anthropic.claude-sonnet-4-20250514-v1:0), but its API does not take it.
    const gw = await startGateway(
      { stream: { heartbeat_s: 0 } },
      { ANTHROPIC_API_KEY: 'sk-ant-e2e', ANTHROPIC_BASE_URL: up.url, AWS_BEARER_TOKEN_BEDROCK: 'bedrock-e2e', AWS_REGION: 'us-east-1' },
    );
    try {
      // The reference's request, as it is written there.
      const res = await rawStream(gw.url, { model: 'claude-sonnet-4-20250514', input: 'Hello!', stream: true }, {}, '/v1/responses');
      assert.equal(res.status, 200, res.text);
      const record = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
      assert.deepEqual(
        [record.provider, record.model, record.requested_model],
        ['anthropic', 'claude-sonnet-4-20250514', 'claude-sonnet-4-20250514'],
      );
      assert.equal(bodyOf(up.requests.at(-1) as RecordedRequest).model, 'claude-sonnet-4-20250514');
    } finally {
      await gw.close();
    }
  });

  it('gemini-2.5-flash with only Google configured goes to Google', async () => {
    up.reply(sse(geminiStreamBody('gemini/text-2.5-flash.sse')));
    const gw = await startGateway({ stream: { heartbeat_s: 0 } }, { GEMINI_API_KEY: 'gm-e2e', GEMINI_BASE_URL: up.url });
    try {
      const res = await rawStream(gw.url, chat('gemini-2.5-flash'));
      assert.equal(res.status, 200, res.text);
      const record = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
      assert.deepEqual([record.provider, record.model], ['google', 'gemini-2.5-flash']);
      assert.match(up.requests.at(-1)?.url ?? '', /gemini-2\.5-flash/);
    } finally {
      await gw.close();
    }
  });

  it('a name two configured providers serve is a 404 listing both', async () => {
    const gw = await startGateway(
      { providers: { other: { base_url: `${other.url}/v1`, api_key: 'sk-upstream', models: ['claude-sonnet-4-5'] } } },
      { ANTHROPIC_API_KEY: 'sk-ant-e2e', ANTHROPIC_BASE_URL: up.url },
    );
    try {
      const res = await rawStream(gw.url, chat('claude-sonnet-4-5'));
      assert.equal(res.status, 404);
      const error = JSON.parse(res.text).error;
      assert.equal(error.code, 'model_not_found');
      assert.match(error.message, /anthropic\/claude-sonnet-4-5/);
      assert.match(error.message, /other\/claude-sonnet-4-5/);
    } finally {
      await gw.close();
    }
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { parseSse, rawStream, requestRecord, startGateway, type TestGateway, upstreamConfig } from '../helpers/gateway.ts';
import { checkResponsesStream } from '../helpers/responses-grammar.ts';
import { relayBodies } from '../helpers/responses-recordings.ts';
import { chatRequest, groqErrorFrame, recordedFrames } from './faults-support.ts';

// The end-of-stream guarantee (docs/streams/contract.md "How a stream ends"): on every exit, the client gets at most
// one finish per choice, the usage so far when it asked for usage, the error frame when the stream
// failed, and [DONE]; and the usage it is told is the usage the ledger records. The budget stop is
// in budgets.test.ts; a usage that cannot be built, in run-stream.test.ts.

const frames = recordedFrames();
// role, then the first two content deltas ("The", " capital").
const head = frames.slice(0, 3);
const PRICING = { 'up/gpt-4o-mini': { input_mtok: 0.15, output_mtok: 0.6 } };
const usageRequest = (extra: Record<string, unknown> = {}) => chatRequest({ stream_options: { include_usage: true }, ...extra });

/** A chat stream as a list of what each frame is: `role`, `content`, `finish <reason>`, `usage`, `error <code>`, `[DONE]`. */
function chatShape(text: string): string[] {
  return parseSse(text).frames.map(({ data }) => {
    if (data === '[DONE]') return '[DONE]';
    const chunk = JSON.parse(data);
    if (chunk.error) return `error ${chunk.error.code}`;
    if (chunk.choices.length === 0) return 'usage';
    const choice = chunk.choices[0];
    if (choice.finish_reason) return `finish ${choice.finish_reason}`;
    return choice.delta.role ? 'role' : 'content';
  });
}

const contents = (n: number) => Array.from({ length: n }, () => 'content');

/** The usage chunk's usage and the error frame's error of a raw chat stream. */
function tail(text: string): { usage: Record<string, any>; error: Record<string, any> | undefined } {
  const parsed = parseSse(text).frames.map((f) => (f.data === '[DONE]' ? null : JSON.parse(f.data)));
  const usage = parsed.find((c) => c?.choices?.length === 0)?.usage;
  return { usage, error: parsed.find((c) => c?.error)?.error };
}

/** The usage the client was told is the ledger's: tokens, estimated, cost. */
async function assertUsageIsTheLedgers(gw: TestGateway, requestId: string, usage: Record<string, any>) {
  const row = await requestRecord(gw, requestId);
  assert.deepEqual(
    {
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      estimated: usage.estimated,
      cost_usd: usage.cost_usd,
    },
    {
      prompt_tokens: row.usage.input_tokens,
      completion_tokens: row.usage.output_tokens,
      estimated: row.usage.estimated,
      cost_usd: row.cost_usd,
    },
  );
  return row;
}

describe('how a chat stream ends: every exit path, the whole frame list', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway({
      ...upstreamConfig(upstream.url),
      stream: { heartbeat_s: 0, idle_timeout_s: 0.3, deadline_s: 10, usage_extensions: true },
      pricing: PRICING,
    });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('a normal end: role, content, one finish, the usage (with cost_usd), [DONE]', async () => {
    upstream.reply({ body: frames.join('') });
    const res = await rawStream(gw.url, usageRequest());
    assert.deepEqual(chatShape(res.text), ['role', ...contents(8), 'finish stop', 'usage', '[DONE]']);
    const { usage } = tail(res.text);
    assert.deepEqual([usage.prompt_tokens, usage.completion_tokens, usage.estimated], [78, 9, false]);
    assert.ok(usage.cost_usd > 0);
    await assertUsageIsTheLedgers(gw, res.headers.get('x-request-id')!, usage);
  });

  it('an upstream reset: the usage so far (counted), the error frame, [DONE]', async () => {
    upstream.reply({ pieces: head, after: 'reset' });
    const res = await rawStream(gw.url, usageRequest());
    assert.deepEqual(chatShape(res.text), ['role', ...contents(2), 'usage', 'error upstream_connection_error', '[DONE]']);
    const { usage } = tail(res.text);
    // "The capital": nothing reported by the upstream, so counted, and said to be.
    assert.equal(usage.estimated, true);
    assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0 && usage.cost_usd > 0);
    const row = await assertUsageIsTheLedgers(gw, res.headers.get('x-request-id')!, usage);
    assert.equal(row.error.code, 'upstream_connection_error');
  });

  it("an upstream error event after output: the usage so far, then the error with the upstream's own type and code beside sluice's", async () => {
    upstream.reply({ pieces: [...head, groqErrorFrame()] });
    const res = await rawStream(gw.url, usageRequest());
    assert.deepEqual(chatShape(res.text), ['role', ...contents(2), 'usage', 'error invalid_request', '[DONE]']);
    const { usage, error } = tail(res.text);
    assert.deepEqual(
      { type: error?.type, code: error?.code, upstream: error?.upstream },
      {
        type: 'invalid_request_error',
        code: 'invalid_request',
        // Groq's status_code 400 is the status the error stands for; the upstream answered 200.
        upstream: { status: 200, type: 'invalid_request_error', code: 'tool_use_failed' },
      },
    );
    const row = await assertUsageIsTheLedgers(gw, res.headers.get('x-request-id')!, usage);
    assert.deepEqual(row.error.upstream, { type: 'invalid_request_error', code: 'tool_use_failed' });
    assert.equal(row.error.code, 'invalid_request');
    assert.equal(row.upstream_status, 200);
  });

  it('an upstream finish_reason "error" fails the stream: the usage so far, the error frame, outcome error (was: stop, outcome ok)', async () => {
    // OpenRouter ends a generation that failed this way: the finish chunk says `error`, nothing else.
    const failed = head[1].replace('"finish_reason":null', '"finish_reason":"error"').replace('"content":"The"', '"content":""');
    assert.notEqual(failed, head[1]);
    upstream.reply({ pieces: [...head, failed, 'data: [DONE]\n\n'] });
    const res = await rawStream(gw.url, usageRequest());
    assert.deepEqual(chatShape(res.text), ['role', ...contents(2), 'usage', 'error upstream_error', '[DONE]']);
    const { usage, error } = tail(res.text);
    assert.deepEqual(error, {
      message: 'up ended the generation with finish_reason "error".',
      type: 'upstream_error',
      code: 'upstream_error',
      upstream: { status: 200, type: null, code: null },
    });
    const row = await assertUsageIsTheLedgers(gw, res.headers.get('x-request-id')!, usage);
    assert.deepEqual([row.outcome, row.error.code, row.upstream_status], ['error', 'upstream_error', 200]);
    assert.ok(row.cost_usd > 0, "the output it did generate is billed, as any failed stream's");
  });

  it('an error event inside a 200 stream is recorded as upstream status 200, with the error (was: 502)', async () => {
    // OpenRouter's in-chunk error: no status of its own, so sluice's status is 502; the upstream's was 200.
    upstream.reply({ pieces: [...head, 'data: {"error":{"message":"Provider disconnected","code":"server_error"}}\n\n'] });
    const res = await rawStream(gw.url, usageRequest());
    assert.deepEqual(chatShape(res.text), ['role', ...contents(2), 'usage', 'error upstream_error', '[DONE]']);
    assert.deepEqual(tail(res.text).error?.upstream, { status: 200, type: null, code: 'server_error' });
    const row = await requestRecord(gw, res.headers.get('x-request-id')!);
    assert.deepEqual(
      [row.outcome, row.upstream_status, row.error.code, row.error.upstream],
      ['error', 200, 'upstream_error', { type: null, code: 'server_error' }],
    );
  });

  it('a truncated stream (no finish, then the connection ends): the usage so far, upstream_stream_truncated, [DONE]', async () => {
    upstream.reply({ pieces: frames.slice(0, 5) });
    const res = await rawStream(gw.url, usageRequest());
    assert.deepEqual(chatShape(res.text), ['role', ...contents(4), 'usage', 'error upstream_stream_truncated', '[DONE]']);
    await assertUsageIsTheLedgers(gw, res.headers.get('x-request-id')!, tail(res.text).usage);
  });

  it('a reset after the finish and the reported usage, before [DONE]: one finish, the reported usage, the error, [DONE]', async () => {
    upstream.reply({ pieces: frames.slice(0, -1), after: 'reset' });
    const res = await rawStream(gw.url, usageRequest());
    assert.deepEqual(chatShape(res.text), ['role', ...contents(8), 'finish stop', 'usage', 'error upstream_connection_error', '[DONE]']);
    const { usage } = tail(res.text);
    assert.deepEqual([usage.prompt_tokens, usage.completion_tokens, usage.estimated], [78, 9, false]);
    await assertUsageIsTheLedgers(gw, res.headers.get('x-request-id')!, usage);
  });

  it('an idle timeout (the scope aborted, the usage still counted): the usage so far, stream_idle_timeout, [DONE]', async () => {
    upstream.reply({ pieces: head, after: 'hang' });
    const res = await rawStream(gw.url, usageRequest());
    assert.deepEqual(chatShape(res.text), ['role', ...contents(2), 'usage', 'error stream_idle_timeout', '[DONE]']);
    const { usage } = tail(res.text);
    assert.ok(usage.completion_tokens > 0);
    await assertUsageIsTheLedgers(gw, res.headers.get('x-request-id')!, usage);
  });

  it('without include_usage: no usage chunk, the error frame, [DONE]', async () => {
    upstream.reply({ pieces: head, after: 'reset' });
    const res = await rawStream(gw.url, chatRequest());
    assert.deepEqual(chatShape(res.text), ['role', ...contents(2), 'error upstream_connection_error', '[DONE]']);
  });
});

describe('how a chat stream ends: the deadline and a shutdown', () => {
  let upstream: FakeUpstream;
  before(async () => {
    upstream = await startFakeUpstream();
  });
  after(async () => {
    await upstream.close();
  });

  it('the deadline: the usage so far, timeout, [DONE]', async () => {
    const gw = await startGateway({
      ...upstreamConfig(upstream.url),
      stream: { heartbeat_s: 0, idle_timeout_s: 30, deadline_s: 2, usage_extensions: true },
      pricing: PRICING,
    });
    try {
      upstream.reply({ pieces: head, after: 'hang' });
      const res = await rawStream(gw.url, usageRequest());
      assert.deepEqual(chatShape(res.text), ['role', ...contents(2), 'usage', 'error timeout', '[DONE]']);
      await assertUsageIsTheLedgers(gw, res.headers.get('x-request-id')!, tail(res.text).usage);
    } finally {
      await gw.close();
    }
  });

  it('a shutdown past its drain time: the usage so far, `cancelled` (a server cancellation, type server_error), [DONE]', async () => {
    const gw = await startGateway({
      ...upstreamConfig(upstream.url),
      stream: { heartbeat_s: 0, idle_timeout_s: 30, deadline_s: 30, usage_extensions: true },
      pricing: PRICING,
    });
    upstream.reply({ pieces: head, after: 'hang' });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(usageRequest()),
    });
    // The stream has started (its first content reached the client) when the drain time runs out.
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('" capital"')) {
      const { value, done } = await reader.read();
      assert.equal(done, false, 'the stream ended before its first content');
      text += new TextDecoder().decode(value);
    }
    await gw.gateway.shutdown(50);
    for (let read = await reader.read(); !read.done; read = await reader.read()) text += new TextDecoder().decode(read.value);
    assert.deepEqual(chatShape(text), ['role', ...contents(2), 'usage', 'error cancelled', '[DONE]']);
    const { usage, error } = tail(text);
    assert.equal(error?.type, 'server_error');
    assert.ok(usage.completion_tokens > 0);
  });
});

describe('how a chat stream ends: the accounting profile', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway({
      ...upstreamConfig(upstream.url),
      stream: { heartbeat_s: 0, idle_timeout_s: 0.3, deadline_s: 10, profile: 'accounting' },
      pricing: PRICING,
    });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('a failure: finish "error", no usage_final (the error frame comes in its place), the error frame carries the usage so far', async () => {
    upstream.reply({ pieces: head, after: 'reset' });
    const res = await rawStream(gw.url, chatRequest());
    const parsed = parseSse(res.text).frames;
    assert.deepEqual(
      parsed.map((f) => f.event ?? (f.data === '[DONE]' ? '[DONE]' : JSON.parse(f.data).type)),
      ['usage_start', 'content', 'content', 'content', 'finish', 'error', '[DONE]'],
    );
    assert.equal(JSON.parse(parsed.at(-3)!.data).finish_reason, 'error');
    const error = JSON.parse(parsed.at(-2)!.data);
    assert.deepEqual(Object.keys(error), [
      'type',
      'data',
      'provider',
      'code',
      'input_tokens',
      'output_tokens',
      'cost_usd',
      'latency_ms',
      'estimated',
    ]);
    assert.equal(error.code, 'upstream_connection_error');
    const row = await requestRecord(gw, res.headers.get('x-request-id')!);
    assert.deepEqual(
      [error.input_tokens, error.output_tokens, error.cost_usd, error.estimated],
      [row.usage.input_tokens, row.usage.output_tokens, row.cost_usd, row.usage.estimated],
    );
    assert.equal(error.input_tokens, JSON.parse(parsed[0].data).input_tokens);
  });
});

/** A Responses stream as the list of its event types, then `[DONE]`. */
function responsesShape(text: string): string[] {
  return parseSse(text).frames.map((f) => (f.data === '[DONE]' ? '[DONE]' : (f.event ?? JSON.parse(f.data).type)));
}

function terminalResponse(text: string): Record<string, any> {
  const last = parseSse(text).frames.at(-2)!;
  return JSON.parse(last.data).response;
}

const OPENED = ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added'];
const CLOSED = ['response.output_text.done', 'response.content_part.done', 'response.output_item.done'];
const deltas = (n: number) => Array.from({ length: n }, () => 'response.output_text.delta');

describe('how a Responses stream ends (translated from chat): every exit path, the whole event list', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway({
      ...upstreamConfig(upstream.url),
      stream: { heartbeat_s: 0, idle_timeout_s: 0.3, deadline_s: 10 },
      responses: { deadline_s: 10 },
      pricing: PRICING,
    });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  const responsesRequest = { model: 'up/gpt-4o-mini', input: 'hi', stream: true };

  it('a normal end: response.completed with the usage, [DONE]', async () => {
    upstream.reply({ body: frames.join('') });
    const res = await rawStream(gw.url, responsesRequest, {}, '/v1/responses');
    assert.deepEqual(responsesShape(res.text), [...OPENED, ...deltas(8), ...CLOSED, 'response.completed', '[DONE]']);
    checkResponsesStream(res.text);
    const { usage } = terminalResponse(res.text);
    assert.deepEqual([usage.input_tokens, usage.output_tokens], [78, 9]);
  });

  for (const [name, reply, code] of [
    ['an upstream reset', { pieces: head, after: 'reset' as const }, 'upstream_connection_error'],
    ['a truncated stream', { pieces: head }, 'upstream_stream_truncated'],
    ['an idle timeout', { pieces: head, after: 'hang' as const }, 'stream_idle_timeout'],
  ] as const) {
    it(`${name}: the items closed, error, response.failed carrying the usage so far (the ledger's), [DONE]`, async () => {
      upstream.reply(reply);
      const res = await rawStream(gw.url, responsesRequest, {}, '/v1/responses');
      assert.deepEqual(responsesShape(res.text), [...OPENED, ...deltas(2), ...CLOSED, 'error', 'response.failed', '[DONE]']);
      checkResponsesStream(res.text);
      const response = terminalResponse(res.text);
      assert.equal(response.error.code, code);
      const row = await requestRecord(gw, res.headers.get('x-request-id')!);
      assert.ok(response.usage.output_tokens > 0);
      assert.deepEqual([response.usage.input_tokens, response.usage.output_tokens], [row.usage.input_tokens, row.usage.output_tokens]);
    });
  }
});

describe('how a relayed Responses stream ends (responses_api: true)', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway({
      ...upstreamConfig(upstream.url, { responses_api: true }),
      stream: { heartbeat_s: 0, idle_timeout_s: 0.3, deadline_s: 10 },
      responses: { deadline_s: 10 },
    });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  const relayRequest = { model: 'up/recorded', input: 'hi', stream: true };

  it("the upstream's response.failed without usage goes out last with the usage so far (the ledger's)", async () => {
    const [body] = relayBodies('openai-responses/failed-insufficient-quota.jsonl');
    upstream.reply({ body });
    const res = await rawStream(gw.url, relayRequest, {}, '/v1/responses');
    assert.deepEqual(responsesShape(res.text), ['response.created', 'response.in_progress', 'error', 'response.failed', '[DONE]']);
    const response = terminalResponse(res.text);
    // The upstream's frame otherwise as it sent it.
    assert.equal(response.error.code, 'insufficient_quota');
    assert.equal(response.id, 'resp_05500b38c2cd9bfc00691c7c9d222481a3b595421266dab424');
    const row = await requestRecord(gw, res.headers.get('x-request-id')!);
    assert.deepEqual([response.usage.input_tokens, response.usage.output_tokens], [row.usage.input_tokens, row.usage.output_tokens]);
    assert.deepEqual(row.error.upstream, { type: null, code: 'insufficient_quota' });
  });

  it("a reset before the upstream's terminal event: the open item closed as incomplete, sluice's error and response.failed with the usage so far", async () => {
    const [body] = relayBodies('openai-responses/text-gpt41-nano.sse');
    const cut = body.split(/(?<=\n\n)/).slice(0, 6);
    upstream.reply({ pieces: cut, after: 'reset' });
    const res = await rawStream(gw.url, relayRequest, {}, '/v1/responses');
    assert.deepEqual(responsesShape(res.text), [...OPENED, ...deltas(2), ...CLOSED, 'error', 'response.failed', '[DONE]']);
    checkResponsesStream(res.text, { upstream: true });
    const response = terminalResponse(res.text);
    assert.equal(response.error.code, 'upstream_connection_error');
    assert.deepEqual(
      response.output.map((item: Record<string, any>) => [item.status, item.content[0].text]),
      [['incomplete', 'Once upon']],
    );
    const row = await requestRecord(gw, res.headers.get('x-request-id')!);
    assert.deepEqual([response.usage.input_tokens, response.usage.output_tokens], [row.usage.input_tokens, row.usage.output_tokens]);
  });
});

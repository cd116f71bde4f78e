import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminCall, projectWithKey } from '../helpers/admin-client.ts';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { parseSse, rawStream, startGateway, type TestGateway, upstreamConfig } from '../helpers/gateway.ts';
import { recordedFrames } from './faults-support.ts';

/*
 * The stream profiles (docs/streams/profiles.md), byte for byte: one per reference document, each
 * answering as its document specifies where the documents disagree with each other or with
 * OpenAI's API, and `openai`, OpenAI's own behaviour, by default. The expected bytes are written
 * out here from the documents (shared/reference/, not in the repository), around what only the
 * response decides: the request id and the created time.
 */

const json = JSON.stringify;
const DONE = 'data: [DONE]\n\n';
const ECHO = ['You ', 'said: ', 'hi'];
/** mock/echo's usage for "hi": one word + 3 per message in, one token per word out. */
const USAGE = '{"prompt_tokens":4,"completion_tokens":3,"total_tokens":7}';
const TOOLS = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];

const chatBody = (model: string, extra: object = {}) => ({ model, messages: [{ role: 'user', content: 'hi' }], stream: true, ...extra });
const profile = (name: string) => ({ 'x-sluice-profile': name });

/** The chunk envelope of a response: what every chunk of it starts with. */
function envelope(res: { headers: Headers; text: string }, model: string): string {
  const id = res.headers.get('x-request-id');
  const created = /"created":(\d+)/.exec(res.text)?.[1];
  return `data: {"id":"chatcmpl-${id}","object":"chat.completion.chunk","created":${created},"model":${json(model)},"service_tier":null,"system_fingerprint":"sluice-mock",`;
}

const choice = (delta: string, finish: string | null = null) =>
  `{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish === null ? 'null' : json(finish)}}`;
const ROLE = choice('{"role":"assistant","content":""}');
const content = (text: string) => choice(`{"content":${json(text)}}`);
const finish = (reason: string) => choice('{}', reason);

/** Chunks with `tail` after `choices` (`` , `,"usage":null`, `,"usage":{…}`). */
const chunks = (head: string, choices: string[], tail = '') => choices.map((c) => `${head}"choices":[${c}]${tail}}\n\n`).join('');

describe('stream profiles on chat completions (mock provider)', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ stream: { heartbeat_s: 0 } });
  });
  after(async () => {
    await gw.close();
  });

  it('openai (the default): usage on opt-in, in a chunk of its own, `"usage":null` on every other chunk', async () => {
    const res = await rawStream(gw.url, chatBody('mock/echo', { stream_options: { include_usage: true } }));
    const head = envelope(res, 'mock/echo');
    const expected = chunks(head, [ROLE, ...ECHO.map(content), finish('stop')], ',"usage":null') + `${head}"choices":[],"usage":${USAGE}}\n\n` + DONE;
    assert.equal(res.text, expected);
    const plain = await rawStream(gw.url, chatBody('mock/echo'));
    assert.equal(plain.text, chunks(envelope(plain, 'mock/echo'), [ROLE, ...ECHO.map(content), finish('stop')]) + DONE);
  });

  it('chat-streaming-usage: the usage chunk on opt-in, and no `usage` field on the other chunks', async () => {
    const res = await rawStream(gw.url, chatBody('mock/echo', { stream_options: { include_usage: true } }), profile('chat-streaming-usage'));
    const head = envelope(res, 'mock/echo');
    assert.equal(res.text, chunks(head, [ROLE, ...ECHO.map(content), finish('stop')]) + `${head}"choices":[],"usage":${USAGE}}\n\n` + DONE);
  });

  it('chat-streaming-full: usage on the finish chunk, null on every other chunk, requested or not', async () => {
    const res = await rawStream(gw.url, chatBody('mock/echo', { stream_options: { include_usage: true } }), profile('chat-streaming-full'));
    const head = envelope(res, 'mock/echo');
    assert.equal(res.text, chunks(head, [ROLE, ...ECHO.map(content)], ',"usage":null') + chunks(head, [finish('stop')], `,"usage":${USAGE}`) + DONE);
    // "Without stream_options.include_usage, the usage field is null in all chunks."
    const plain = await rawStream(gw.url, chatBody('mock/echo'), profile('chat-streaming-full'));
    assert.equal(plain.text, chunks(envelope(plain, 'mock/echo'), [ROLE, ...ECHO.map(content), finish('stop')], ',"usage":null') + DONE);
  });

  it('chat-streaming-full: `content: null` on tool-call deltas', async () => {
    const res = await rawStream(gw.url, chatBody('mock/tools', { tools: TOOLS }), profile('chat-streaming-full'));
    const head = envelope(res, 'mock/tools');
    const call = (fields: object) => choice(`{"content":null,"tool_calls":[${json({ index: 0, ...fields })}]}`);
    const expected = chunks(
      head,
      [
        ROLE,
        call({ id: 'call_mock_0', type: 'function', function: { name: 'get_weather', arguments: '' } }),
        ...['{"location":', ' "Paris",', ' "unit": "celsius"}'].map((a) => call({ function: { arguments: a } })),
        finish('tool_calls'),
      ],
      ',"usage":null',
    );
    assert.equal(res.text, expected + DONE);
    // openai: the deltas carry `tool_calls` alone.
    const plain = await rawStream(gw.url, chatBody('mock/tools', { tools: TOOLS }));
    assert.match(plain.text, /"delta":\{"tool_calls":\[\{"index":0,"id":"call_mock_0"/);
    assert.doesNotMatch(plain.text, /"content":null/);
  });

  it('chat-streaming-full: the mid-stream error is a named `event: error` frame', async () => {
    const res = await rawStream(gw.url, chatBody('mock/error'), profile('chat-streaming-full'));
    const { frames } = parseSse(res.text);
    assert.deepEqual(frames.at(-2), {
      event: 'error',
      data: json({
        error: {
          message: 'The mock provider failed mid-stream, as mock/error always does.',
          type: 'upstream_error',
          code: 'upstream_error',
          upstream: { status: null, type: null, code: 'mock_failure' },
        },
      }),
    });
    assert.ok(res.text.endsWith(`\n\n${DONE}`));
  });

  it('chat-streaming-always-usage: the usage chunk without asking for it (stream_options ignored), no `usage` elsewhere', async () => {
    for (const extra of [{}, { stream_options: { include_usage: false } }]) {
      const res = await rawStream(gw.url, chatBody('mock/echo', extra), profile('chat-streaming-always-usage'));
      const head = envelope(res, 'mock/echo');
      assert.equal(res.text, chunks(head, [ROLE, ...ECHO.map(content), finish('stop')]) + `${head}"choices":[],"usage":${USAGE}}\n\n` + DONE);
    }
  });

  it('accounting: an upstream that refuses before any output is an error frame in a 200 stream (openai: an HTTP error)', async () => {
    const startedAt = Date.now();
    const res = await rawStream(gw.url, chatBody('mock/unavailable'), profile('accounting'));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const latency = Number(/"latency_ms":(\d+)/.exec(res.text)?.[1]);
    assert.ok(latency >= 0 && latency <= Date.now() - startedAt);
    // No usage_start: the upstream never acknowledged the request. Nothing was consumed.
    const error = {
      type: 'error',
      data: 'The mock provider is overloaded, as mock/unavailable always is.',
      provider: 'mock',
      code: 'upstream_overloaded',
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
      latency_ms: latency,
      estimated: false,
    };
    assert.equal(res.text, `data: ${json(error)}\n\n${DONE}`);
    const plain = await rawStream(gw.url, chatBody('mock/unavailable'));
    assert.equal(plain.status, 503);
  });

  it('an unknown X-Sluice-Profile is ignored: the config profile applies', async () => {
    const res = await rawStream(gw.url, chatBody('mock/echo'), profile('no-such-profile'));
    assert.equal(res.text, chunks(envelope(res, 'mock/echo'), [ROLE, ...ECHO.map(content), finish('stop')]) + DONE);
  });
});

describe('chat-streaming-usage: the upstream error type at the top level', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway({ ...upstreamConfig(upstream.url), stream: { heartbeat_s: 0 } });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('`"type":"stream_error"` as the upstream said it (openai: sluice\'s type, the upstream\'s beside it)', async () => {
    // The document's own frame, from an upstream gateway of its kind, after some output.
    const failure = 'data: {"error":{"message":"upstream timeout","type":"stream_error"}}\n\n';
    const head = recordedFrames().slice(0, 3);
    const errorOf = (text: string) => JSON.parse(parseSse(text).frames.at(-2)?.data ?? '{}').error;
    upstream.reply({ pieces: [...head, failure] });
    const res = await rawStream(gw.url, chatBody('up/gpt-4o-mini'), profile('chat-streaming-usage'));
    assert.deepEqual(errorOf(res.text), {
      message: 'upstream timeout',
      type: 'stream_error',
      code: 'upstream_error',
      upstream: { status: 200, type: 'stream_error', code: null },
    });
    upstream.reply({ pieces: [...head, failure] });
    const plain = await rawStream(gw.url, chatBody('up/gpt-4o-mini'));
    assert.equal(errorOf(plain.text).type, 'upstream_error');
  });
});

describe('responses-streaming on the Responses surface', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ stream: { heartbeat_s: 0 } });
  });
  after(async () => {
    await gw.close();
  });

  const responses = async (model: string, headers: Record<string, string>, extra: object = {}) => {
    const res = await rawStream(gw.url, { model, input: 'hi', stream: true, ...extra }, headers, '/v1/responses');
    return parseSse(res.text)
      .frames.filter((f) => f.data !== '[DONE]')
      .map((f) => JSON.parse(f.data));
  };

  it('response.created carries zero usage; argument deltas name their call_id (openai: usage null, no call_id)', async () => {
    const events = await responses('mock/tools', profile('responses-streaming'), { tools: [{ type: 'function', name: 'get_weather' }] });
    assert.deepEqual(events[0].response.usage, { input_tokens: 0, output_tokens: 0, total_tokens: 0 });
    assert.deepEqual(events[1].response.usage, { input_tokens: 0, output_tokens: 0, total_tokens: 0 });
    const deltas = events.filter((e) => e.type === 'response.function_call_arguments.delta');
    assert.equal(deltas.length, 3);
    for (const d of deltas) assert.deepEqual(Object.keys(d), ['type', 'sequence_number', 'item_id', 'output_index', 'call_id', 'delta']);
    assert.ok(deltas.every((d) => d.call_id === 'call_mock_0'));

    const plain = await responses('mock/tools', {}, { tools: [{ type: 'function', name: 'get_weather' }] });
    assert.equal(plain[0].response.usage, null);
    const plainDelta = plain.find((e) => e.type === 'response.function_call_arguments.delta');
    assert.deepEqual(Object.keys(plainDelta), ['type', 'sequence_number', 'item_id', 'output_index', 'delta']);
  });

  it('a failure is response.failed alone (openai: an `error` event first)', async () => {
    const events = await responses('mock/error', profile('responses-streaming'));
    assert.deepEqual(
      events.slice(-1).map((e) => e.type),
      ['response.failed'],
    );
    assert.equal(events.filter((e) => e.type === 'error').length, 0);
    assert.equal(events.at(-1).response.error.message, 'The mock provider failed mid-stream, as mock/error always does.');
    const plain = await responses('mock/error', {});
    assert.deepEqual(
      plain.slice(-2).map((e) => e.type),
      ['error', 'response.failed'],
    );
  });
});

describe('choosing a profile: config, endpoint, header; the settings set apart win', () => {
  const MASTER = 'sk-master-stream-profiles';
  const PROJECT = 'proj_profiles';
  let gw: TestGateway;
  let openaiGw: TestGateway;
  let key: string;
  before(async () => {
    gw = await startGateway({
      auth: { master_key: MASTER },
      stream: { heartbeat_s: 0, profile: 'accounting', error_style: 'event' },
    });
    openaiGw = await startGateway({ stream: { heartbeat_s: 0 } });
    key = (await projectWithKey(gw.url, MASTER, PROJECT)).key;
    for (const [name, stream_profile] of [
      ['full', 'chat-streaming-full'],
      ['plain', 'openai'],
    ]) {
      const created = await adminCall(gw.url, MASTER, 'POST', '/admin/endpoints', { project: PROJECT, name, model: 'mock/echo', stream_profile });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.stream_profile, stream_profile);
    }
  });
  after(async () => {
    await gw.close();
    await openaiGw.close();
  });

  const auth = () => ({ authorization: `Bearer ${key}` });

  it("an endpoint's profile replaces the config's; the config's error_style, set apart, still wins over it", async () => {
    const res = await rawStream(gw.url, chatBody('echo'), auth(), `/${PROJECT}/full/v1/chat/completions`);
    assert.equal(res.text, chunks(envelope(res, 'echo'), [ROLE, ...ECHO.map(content), finish('stop')], ',"usage":null') + DONE);
    const failed = await rawStream(gw.url, chatBody('mock/error'), auth(), `/${PROJECT}/plain/v1/chat/completions`);
    assert.equal(parseSse(failed.text).frames.at(-2)?.event, 'error');
  });

  it("serves /api/v1 (the accounting reference's base path) with the accounting profile, nowhere else", async () => {
    const res = await rawStream(gw.url, chatBody('mock/echo'), auth(), '/api/v1/chat/completions');
    assert.equal(res.status, 200);
    assert.match(res.text, /^event: usage_start\n/);
    const onEndpoint = await rawStream(gw.url, chatBody('mock/echo'), auth(), `/${PROJECT}/plain/api/v1/chat/completions`);
    assert.equal(onEndpoint.status, 404);
    assert.equal(JSON.parse(onEndpoint.text).error.code, 'endpoint_not_found');
    const unknown = await rawStream(openaiGw.url, chatBody('mock/echo'), {}, '/api/v1/chat/completions');
    assert.equal(unknown.status, 404);
    assert.equal(JSON.parse(unknown.text).error.code, 'route_not_found');
  });

  it('the admin API takes every profile name and refuses any other, naming the field', async () => {
    const bad = await adminCall(gw.url, MASTER, 'POST', '/admin/endpoints', {
      project: PROJECT,
      name: 'bad',
      model: 'mock/echo',
      stream_profile: 'indoxhub',
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, 'stream_profile');
  });
});

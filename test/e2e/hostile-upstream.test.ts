import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { z } from 'zod';
import { type FakeUpstream, startFakeUpstream, type UpstreamReply } from '../helpers/fake-upstream.ts';
import { parseSse, rawStream, requestRecord, startGateway, type TestGateway, useUpstreamGateway } from '../helpers/gateway.ts';

/**
 * Regression for "an upstream can inject JSON into sluice's output": `choices[].index` was
 * written into the frame unescaped, so `"abc"`, `{}` or `1e400` made invalid JSON and a crafted
 * string added a fake choice. Here every field of a small stream per provider (every node, so
 * ids, model, indexes, names, text, finish reasons, logprobs, annotations, usage and the objects
 * and arrays holding them) gets each hostile value below, and whatever sluice answers must be
 * valid JSON frames with choice 0 only: either the answer, or a 502 / error frame saying
 * `upstream_malformed_stream` (or the upstream's own error), never a 500.
 */

/** Raw JSON literals: written into the upstream body as they are (1e400 parses as Infinity). */
const HOSTILE: readonly string[] = [
  // Spliced unquoted (as `choices[].index` was), this closed the choice and added a second one.
  JSON.stringify('0,"delta":{"content":"pwned"},"logprobs":null,"finish_reason":null},{"index":1'),
  // The same inside a quoted value: quotes and a backslash.
  JSON.stringify('a\\"},{"index":1,"delta":{"content":"pwned"}},{"x":"'),
  JSON.stringify('x\n\ndata: [DONE]\n\ny'),
  '{"index":1,"content":"pwned","text":"pwned"}',
  '[{"index":1},"x",2]',
  '1e400',
  '-1',
  '0.5',
  'null',
];

/** The Responses surface gets one string, one object and one number per field (its frames are all JSON.stringify'd). */
const HOSTILE_RESPONSES = new Set([HOSTILE[0], HOSTILE[3], HOSTILE[5]]);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = (string | number)[];

/** One provider: where its model lives, and how a list of payloads becomes its wire body. */
interface Protocol {
  model: string;
  /** Base streams (payload lists) to mutate. */
  streams: Json[][];
  /** The upstream reply carrying these payloads, each already serialized (`base`: the unmutated stream). */
  reply(payloads: string[], base: Json[]): UpstreamReply;
}

const SENTINEL = '\u0000hostile\u0000';
const SENTINEL_JSON = JSON.stringify(SENTINEL);

/** Every node of a payload below its root, as a path. */
function paths(value: Json, prefix: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return [];
  const out: Path[] = [];
  const entries: [string | number, Json][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  for (const [key, child] of entries) {
    const path = [...prefix, key];
    out.push(path, ...paths(child, path));
  }
  return out;
}

/** The payload serialized with the node at `path` replaced by a raw JSON literal. */
function withRaw(payload: Json, path: Path, raw: string): string {
  const copy = structuredClone(payload) as Record<string | number, Json>;
  let node: Record<string | number, Json> = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, Json>;
  node[path[path.length - 1]] = SENTINEL;
  return JSON.stringify(copy).replace(SENTINEL_JSON, raw);
}

const openAIEnvelope = {
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-x',
  system_fingerprint: 'fp',
  service_tier: 'default',
};
/** Only the first chunk carries the envelope: sluice reads it there, and repeating it would only repeat cases. */
const openAIChunk = (choice: Json): Json => ({ choices: [choice] });
const token = { token: 'Hi', logprob: -0.1, bytes: [72, 105], top_logprobs: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105] }] };

const openAI: Protocol = {
  model: 'up/m',
  streams: [
    [
      {
        ...openAIEnvelope,
        choices: [
          { index: 0, delta: { role: 'assistant', content: '', reasoning_content: 'think', reasoning: 'more' }, logprobs: null, finish_reason: null },
        ],
      },
      openAIChunk({ index: 0, delta: { content: 'Hi' }, logprobs: { content: [token], refusal: null }, finish_reason: null }),
      openAIChunk({
        index: 0,
        delta: {
          content: [
            { type: 'thinking', thinking: [{ type: 'text', text: 't' }] },
            { type: 'text', text: 'x' },
          ],
        },
      }),
      openAIChunk({
        index: 0,
        delta: {
          annotations: [{ type: 'url_citation', url_citation: { url: 'https://a.example', title: 'A', start_index: 0, end_index: 2, content: 'c' } }],
        },
      }),
      openAIChunk({ index: 0, delta: { refusal: 'no' }, logprobs: { content: null, refusal: [token] } }),
      openAIChunk({ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":' } }] } }),
      openAIChunk({ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '1}' } }] } }),
      openAIChunk({ index: 0, delta: {}, finish_reason: 'tool_calls' }),
      {
        choices: [],
        usage: {
          prompt_tokens: 5,
          completion_tokens: 3,
          total_tokens: 8,
          prompt_tokens_details: { cached_tokens: 1 },
          completion_tokens_details: { reasoning_tokens: 1 },
        },
        x_groq: { usage: { prompt_tokens: 5 } },
      },
    ],
  ],
  reply: (payloads) => ({ body: `${payloads.map((p) => `data: ${p}\n\n`).join('')}data: [DONE]\n\n` }),
};

const anthropic: Protocol = {
  model: 'anthropic/claude-x',
  streams: [
    [
      {
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'claude-x',
          content: [],
          stop_reason: null,
          usage: { input_tokens: 5, output_tokens: 1, cache_read_input_tokens: 1, cache_creation_input_tokens: 1 },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: 'a', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'think' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'enc' } },
      { type: 'content_block_start', index: 2, content_block: { type: 'text', text: 'H' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'i' } },
      { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} } },
      { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } },
      { type: 'content_block_stop', index: 3 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ],
    [{ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
  ],
  // The `event:` line names the unmutated type: the hostile value goes in the payload only.
  reply: (payloads, base) => ({
    body: payloads.map((p, i) => `event: ${(base[i] as { type: string }).type}\ndata: ${p}\n\n`).join(''),
  }),
};

const google: Protocol = {
  // Unpriced model names throughout: pricing is not what this test is about.
  model: 'google/gemini-x',
  streams: [
    [
      {
        candidates: [{ content: { role: 'model', parts: [{ text: 'think', thought: true, thoughtSignature: 'sig0' }] }, index: 0 }],
        modelVersion: 'gemini-2.5-flash',
        responseId: 'r1',
      },
      {
        candidates: [
          {
            content: { parts: [{ text: 'Hi', thoughtSignature: 'sig' }] },
            index: 0,
            logprobsResult: {
              chosenCandidates: [{ token: 'Hi', logProbability: -0.1 }],
              topCandidates: [{ candidates: [{ token: 'Hi', logProbability: -0.1 }] }],
            },
          },
        ],
      },
      { candidates: [{ content: { parts: [{ functionCall: { id: 'c1', name: 'f', args: { a: 1 } } }] }, index: 0 }] },
      {
        candidates: [
          {
            content: {
              parts: [{ functionCall: { name: 'g', partialArgs: [{ jsonPath: '$.a', stringValue: 'x', willContinue: true }], willContinue: true } }],
            },
          },
        ],
      },
      { candidates: [{ content: { parts: [{ functionCall: { partialArgs: [{ jsonPath: '$.b', numberValue: 2 }] } }] } }] },
      {
        candidates: [{ content: { parts: [{ functionCall: {} }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: {
          promptTokenCount: 5,
          candidatesTokenCount: 3,
          thoughtsTokenCount: 1,
          cachedContentTokenCount: 1,
          toolUsePromptTokenCount: 1,
        },
      },
    ],
    [{ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 5 } }],
    [{ error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED', details: [{ reason: 'RATE_LIMIT' }] } }],
  ],
  reply: (payloads) => ({ body: payloads.map((p) => `data: ${p}\r\n\r\n`).join('') }),
};

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const header = (value: string) => ({ type: 'string' as const, value });

/** Bedrock payloads are `{"<eventType>": payload}` here; the event type travels as a header. */
const bedrock: Protocol = {
  model: 'bedrock/anthropic.claude-x',
  streams: [
    [
      { messageStart: { role: 'assistant' } },
      { contentBlockDelta: { contentBlockIndex: 0, delta: { reasoningContent: { text: 'think' } } } },
      { contentBlockDelta: { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'sig', redactedContent: 'enc' } } } },
      { contentBlockStop: { contentBlockIndex: 0 } },
      { contentBlockDelta: { contentBlockIndex: 1, delta: { text: 'Hi' } } },
      { contentBlockStart: { contentBlockIndex: 2, start: { toolUse: { toolUseId: 't1', name: 'f' } } } },
      { contentBlockDelta: { contentBlockIndex: 2, delta: { toolUse: { input: '{"a":1}' } } } },
      { contentBlockStop: { contentBlockIndex: 2 } },
      { messageStop: { stopReason: 'tool_use' } },
      { metadata: { usage: { inputTokens: 5, outputTokens: 3, cacheReadInputTokens: 1, cacheWriteInputTokens: 1 } } },
    ],
    [{ throttlingException: { message: 'slow down' } }],
  ],
  reply: (payloads) => ({
    headers: { 'content-type': 'application/vnd.amazon.eventstream' },
    body: Buffer.concat(
      payloads.map((p) => {
        // The wrapper's one key is the event type; its value (hostile or not) is the message body.
        const type = /^\{"([A-Za-z]+)":/.exec(p)?.[1] ?? 'unknown';
        const body = p.slice(type.length + 4, -1);
        const kind = type.endsWith('Exception') ? 'exception' : 'event';
        return codec.encode({
          headers: { [`:${kind}-type`]: header(type), ':content-type': header('application/json'), ':message-type': header(kind) },
          body: fromUtf8(body),
        });
      }),
    ),
  }),
};

/** Runs task(0..count-1), at most `width` at a time; the first failure fails the whole run. */
async function inParallel(count: number, width: number, task: (n: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: width }, worker));
}

const count = z.number().int().min(0);
const logprob = z.object({ token: z.string(), logprob: z.number(), bytes: z.array(z.number().int().min(0).max(255)).nullable() }).strict();
const logprobs = z.array(logprob.extend({ top_logprobs: z.array(logprob) }).strict()).nullable();

/** A chat.completion.chunk as OpenAI documents it, every upstream-sourced value typed (extra keys refused). */
const chatChunk = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion.chunk'),
    created: count,
    model: z.string(),
    service_tier: z.string().nullable(),
    system_fingerprint: z.string().nullable(),
    choices: z
      .array(
        z
          .object({
            index: z.literal(0),
            delta: z
              .object({
                role: z.literal('assistant').optional(),
                content: z.string().optional(),
                reasoning_content: z.string().optional(),
                reasoning_signature: z.string().optional(),
                refusal: z.string().optional(),
                tool_calls: z
                  .array(
                    z
                      .object({
                        index: count,
                        id: z.string().optional(),
                        type: z.literal('function').optional(),
                        function: z.object({ name: z.string().optional(), arguments: z.string() }).strict(),
                      })
                      .strict(),
                  )
                  .optional(),
                annotations: z
                  .array(
                    z
                      .object({
                        type: z.literal('url_citation'),
                        url_citation: z
                          .object({ url: z.string(), title: z.string(), start_index: count, end_index: count, content: z.string().optional() })
                          .strict(),
                      })
                      .strict(),
                  )
                  .optional(),
              })
              .strict(),
            logprobs: z.object({ content: logprobs, refusal: logprobs }).strict().nullable(),
            finish_reason: z.enum(['stop', 'length', 'tool_calls', 'content_filter']).nullable(),
          })
          .strict(),
      )
      .max(1),
    usage: z
      .object({
        prompt_tokens: count,
        completion_tokens: count,
        total_tokens: count,
        prompt_tokens_details: z.object({ cached_tokens: count.optional(), cache_write_tokens: count.optional() }).strict().optional(),
        completion_tokens_details: z.object({ reasoning_tokens: count }).strict().optional(),
      })
      .strict()
      .nullable()
      .optional(),
  })
  .strict();

interface Outcome {
  status: number;
  text: string;
}

/** What a client got must be well-formed, whatever the upstream sent. */
function assertWellFormed(outcome: Outcome, surface: 'chat' | 'responses', label: string): void {
  const { status, text } = outcome;
  assert.ok(status === 200 || (status >= 400 && status !== 500), `${label}: HTTP ${status} ${text.slice(0, 300)}`);
  assert.ok(!text.includes('internal_error'), `${label}: ${text.slice(0, 300)}`);
  if (status !== 200) {
    const body = JSON.parse(text) as { error: { code: string } };
    assert.equal(typeof body.error.code, 'string', label);
    return;
  }
  for (const frame of parseSse(text).frames) {
    if (frame.data === '[DONE]') continue;
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(frame.data) as Record<string, unknown>;
    } catch {
      assert.fail(`${label}: a ${surface} frame is not JSON: ${frame.data.slice(0, 300)}`);
    }
    if (surface === 'chat' && !('error' in parsed)) {
      const checked = chatChunk.safeParse(parsed);
      assert.ok(
        checked.success,
        `${label}: ${checked.error?.issues[0]?.path.join('.')} ${checked.error?.issues[0]?.message} in ${frame.data.slice(0, 300)}`,
      );
    }
  }
}

describe('hostile upstream values never reach a client as broken JSON or an extra choice', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway({
      providers: {
        up: { base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' },
        anthropic: { base_url: upstream.url, api_key: 'sk-ant-upstream' },
        google: { base_url: upstream.url, api_key: 'AIza-upstream' },
        bedrock: { base_url: upstream.url, api_key: 'bedrock-token', region: 'us-east-1' },
      },
    });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  const protocols: [string, Protocol][] = [
    ['openai-compatible', openAI],
    ['anthropic', anthropic],
    ['google', google],
    ['bedrock', bedrock],
  ];
  for (const [name, protocol] of protocols) {
    it(`${name}: every field of every chunk, each hostile value, chat and Responses streams`, async () => {
      const cases: { label: string; raw: string; reply: UpstreamReply }[] = [];
      for (const [s, stream] of protocol.streams.entries()) {
        const plain = stream.map((p) => JSON.stringify(p));
        for (const [i, payload] of stream.entries()) {
          for (const path of paths(payload)) {
            for (const raw of HOSTILE) {
              const payloads = [...plain];
              payloads[i] = withRaw(payload, path, raw);
              cases.push({ label: `${name} stream ${s} payload ${i} ${path.join('.')} = ${raw}`, raw, reply: protocol.reply(payloads, stream) });
            }
          }
        }
      }
      // Each request names its case in the prompt, so the upstream knows which body to send and
      // a few requests can run at once.
      upstream.reply((req) => cases[Number(/case-(\d+)/.exec(req.body)?.[1])].reply);
      await inParallel(cases.length, 4, async (n) => {
        const { label, raw } = cases[n];
        const content = `case-${n}`;
        const chat = await rawStream(gw.url, {
          model: protocol.model,
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content }],
        });
        assertWellFormed(chat, 'chat', label);
        if (!HOSTILE_RESPONSES.has(raw)) return;
        const responses = await rawStream(gw.url, { model: protocol.model, stream: true, input: content }, {}, '/v1/responses');
        assertWellFormed(responses, 'responses', label);
      });
      assert.ok(cases.length > 200, `${cases.length} cases`);
    });
  }

  it('a crafted choices[].index fails the stream as upstream_malformed_stream (502 before any output)', async () => {
    upstream.reply(openAI.reply([withRaw(openAI.streams[0][1], ['choices', 0, 'index'], HOSTILE[0])], []));
    const res = await rawStream(gw.url, { model: 'up/m', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(res.status, 502);
    const body = JSON.parse(res.text) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'upstream_malformed_stream');
    assert.match(body.error.message, /choices\[0\]\.index/);
  });

  it('an index past the first output fails with an error frame, not a second choice', async () => {
    const payloads = openAI.streams[0].map((p) => JSON.stringify(p));
    payloads[2] = withRaw(openAI.streams[0][2], ['choices', 0, 'index'], '1e400');
    upstream.reply(openAI.reply(payloads, openAI.streams[0]));
    const res = await rawStream(gw.url, { model: 'up/m', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(res.status, 200);
    const frames = parseSse(res.text).frames;
    const last = JSON.parse(frames[frames.length - 2].data) as { error: { code: string } };
    assert.equal(last.error.code, 'upstream_malformed_stream');
    assert.equal(frames[frames.length - 1].data, '[DONE]');
  });
});

describe('regression: a model name could send the operator key to another path on the provider host', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    upstream.reply({ status: 500, body: 'must not be reached' });
    gw = await startGateway({
      providers: {
        up: { base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' },
        anthropic: { base_url: upstream.url, api_key: 'sk-ant-upstream' },
        google: { base_url: upstream.url, api_key: 'AIza-upstream' },
        bedrock: { base_url: upstream.url, api_key: 'bedrock-token', region: 'us-east-1' },
      },
    });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  const traversal = ['../../../v1/admin/delete?x=', '..', 'x/../../admin', 'x?key=1', 'x#y', 'x%2F..%2Fadmin', 'x\r\nX-Evil: 1', 'x\u0000'];
  const cases: [string, string[]][] = [
    ['google', traversal],
    ['bedrock', traversal],
    // The model travels in the body here: only control characters are refused.
    ['up', ['x\r\nX-Evil: 1', 'x\u0000', 'x'.repeat(513)]],
    ['anthropic', ['x\r\nX-Evil: 1', 'x\u0000']],
  ];
  for (const [provider, names] of cases) {
    it(`${provider}: a 400 naming model, and nothing sent upstream`, async () => {
      for (const name of names) {
        for (const stream of [true, false]) {
          const before = upstream.requests.length;
          const res = await rawStream(gw.url, { model: `${provider}/${name}`, stream, messages: [{ role: 'user', content: 'hi' }] });
          const label = `${provider}/${JSON.stringify(name)} stream=${stream}`;
          assert.equal(res.status, 400, `${label}: ${res.text}`);
          const body = JSON.parse(res.text) as { error: { param: string; code: string } };
          assert.equal(body.error.param, 'model', label);
          assert.equal(upstream.requests.length, before, label);
        }
      }
    });
  }

  it('a Bedrock ARN is sent as one percent-encoded path segment', async () => {
    const arn = 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-7-sonnet-20250219-v1:0';
    upstream.reply({ status: 400, body: '{"message":"stop here"}', headers: { 'content-type': 'application/json' } });
    const res = await rawStream(gw.url, { model: `bedrock/${arn}`, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(res.status, 400);
    assert.equal(upstream.requests.at(-1)?.url, `/model/${encodeURIComponent(arn)}/converse-stream`);
  });
});

describe('regression: upstream error text passed a provider key through to the client and the ledger', () => {
  const KEY = 'sk-upstream-secret-0123456789abcdef';
  const GOOGLE_KEY = 'AIzaSyConfiguredGoogleKey0123456789abcd';
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: {
      providers: {
        up: { base_url: `${url}/v1`, api_key: KEY },
        google: { base_url: url, api_key: GOOGLE_KEY },
      },
    },
  }));

  /** The client's answer and the ledger's record of it, which must both be free of the keys. */
  async function check(model: string, stream: boolean, leaked: string[]): Promise<string> {
    const res = await rawStream(gw.url, { model, stream, messages: [{ role: 'user', content: 'hi' }] });
    const record = await requestRecord(gw, String(res.headers.get('x-request-id')));
    const seen = `${res.text}\n${JSON.stringify(record)}`;
    for (const secret of leaked) assert.ok(!seen.includes(secret), `${model} stream=${stream}: ${seen.slice(0, 400)}`);
    assert.match(record.error?.message ?? '', /\[redacted\]/);
    return res.text;
  }

  it('a 401 that echoes the configured key (OpenAI style), stream and not', async () => {
    upstream.reply({
      status: 401,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        error: {
          message: `Incorrect API key provided: ${KEY}. You can find your API key at https://platform.openai.com/account/api-keys.`,
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      }),
    });
    for (const stream of [true, false]) {
      const text = await check('up/m', stream, [KEY]);
      assert.match(text, /Incorrect API key provided: \[redacted\]\. You can find your API key at https:\/\/platform\.openai\.com/);
    }
  });

  it('an error inside a 200 stream after output, and a key the upstream was not configured with', async () => {
    const other = 'sk-proj-AbCdEf0123456789AbCdEf0123456789';
    upstream.reply({
      body:
        `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'Hi' } }] })}\n\n` +
        `data: ${JSON.stringify({ error: { message: `upstream used ${KEY} and ${other}`, code: 502 } })}\n\n`,
    });
    await check('up/m', true, [KEY, other]);
  });

  it('a Gemini error naming its key, and an undecodable chunk quoting it', async () => {
    upstream.reply({
      status: 400,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error: { code: 400, message: `API key ${GOOGLE_KEY} not valid.`, status: 'INVALID_ARGUMENT' } }),
    });
    await check('google/gemini-x', true, [GOOGLE_KEY]);
    upstream.reply({ body: `data: {"candidates": [${GOOGLE_KEY}\r\n\r\n` });
    await check('google/gemini-x', true, [GOOGLE_KEY]);
  });
});

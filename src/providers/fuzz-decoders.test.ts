import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { z } from 'zod';
import { STREAM_PROFILES } from '../protocol/stream-profiles.ts';
import { anthropicPayloads } from '../../test/helpers/anthropic-fixtures.ts';
import { bedrockBody, decodedEvents, eventStreamMessages } from '../../test/helpers/bedrock-fixtures.ts';
import { decodeAll } from '../../test/helpers/decode.ts';
import { prng } from '../../test/helpers/fake-upstream.ts';
import { listFixtures, openAIPayloads } from '../../test/helpers/fixtures.ts';
import { geminiPayloads, geminiResponseOf } from '../../test/helpers/gemini-fixtures.ts';
import { openAICompatibleRecordings } from '../../test/helpers/openai-recordings.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { assemble } from '../protocol/canonical/assemble.ts';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import { ChatChunkEncoder } from '../surfaces/chat/encode-stream.ts';
import { encodeCompletion } from '../surfaces/chat/encode-response.ts';
import { ResponsesEventEncoder } from '../surfaces/responses/encode-stream.ts';
import { decodeAnthropicResponse } from './anthropic/decode-response.ts';
import { createAnthropicStreamDecoder } from './anthropic/decode-stream.ts';
import { mapAnthropicError } from './anthropic/map-error.ts';
import { decodeBedrockResponse } from './bedrock/decode-response.ts';
import { createBedrockStreamDecoder } from './bedrock/decode-stream.ts';
import { mapBedrockError } from './bedrock/map-error.ts';
import { decodeGeminiResponse } from './google/decode-response.ts';
import { createGeminiStreamDecoder } from './google/decode-stream.ts';
import { mapGoogleError } from './google/map-error.ts';
import { decodeOpenAICompatibleResponse } from './openai-compatible/decode-response.ts';
import { createOpenAICompatibleFrameDecoder } from './openai-compatible/decode-stream.ts';
import { mapOpenAICompatibleError } from './openai-compatible/map-error.ts';
import { createSseStreamDecoder } from './sse-decoder.ts';
import type { StreamDecoder } from './types.ts';

/**
 * A seeded fuzz harness over the recorded streams (design: "a bad chunk becomes an error event,
 * never a throw"). Each case takes a recording, gives one to three of its JSON values a wrong type
 * (string <-> number <-> object <-> array <-> null, huge and fractional numbers) or drops them,
 * and runs the result through the provider's stream decoder (random read boundaries), its
 * response decoder and error mapper, then through the chat and Responses encoders. Every throw
 * is a bug; every event must be well typed; every frame must be JSON. Regression for "malformed
 * upstream chunks are reported as sluice bugs" (500 internal_error instead of
 * upstream_malformed_stream). The seed and count are fixed so a failure reproduces.
 */

const SEED = 20240601;
const CASES_PER_PROVIDER = 250;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Wrong-typed replacements, as raw JSON (1e400 parses as Infinity). */
const REPLACEMENTS = [
  '""',
  '"x"',
  '"\\"},{\\"index\\":1"',
  '-1',
  '0.5',
  '1e400',
  '9007199254740993',
  'null',
  'true',
  '{}',
  '{"a":[1]}',
  '[]',
  '[null,"x",{}]',
];
const SENTINEL = '\u0000fuzz\u0000';

/** Every node of a value, root excluded, as [parent, key] pairs. */
function nodes(value: Json, out: [Json[] | Record<string, Json>, string | number][] = []) {
  if (value === null || typeof value !== 'object') return out;
  if (Array.isArray(value)) {
    value.forEach((child, i) => {
      out.push([value, i]);
      nodes(child, out);
    });
  } else {
    for (const [key, child] of Object.entries(value)) {
      out.push([value, key]);
      nodes(child, out);
    }
  }
  return out;
}

/** The payloads serialized with one to three nodes replaced or dropped (or a whole payload replaced). */
function mutate(payloads: Json[], rand: () => number): string[] {
  const copies = payloads.map((p) => structuredClone(p));
  const whole = new Map<number, string>();
  /** Placeholder strings put in the copies, and the raw JSON each stands for. */
  const placed: [string, string][] = [];
  const edits = 1 + Math.floor(rand() * 3);
  for (let e = 0; e < edits; e++) {
    const p = Math.floor(rand() * copies.length);
    const all = nodes(copies[p]);
    const replacement = REPLACEMENTS[Math.floor(rand() * REPLACEMENTS.length)];
    if (all.length === 0 || rand() < 0.03) {
      whole.set(p, replacement);
      continue;
    }
    const [parent, key] = all[Math.floor(rand() * all.length)];
    if (rand() < 0.25) {
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key as string];
    } else {
      const placeholder = `${SENTINEL}${e}`;
      (parent as Record<string | number, Json>)[key] = placeholder;
      placed.push([JSON.stringify(placeholder), replacement]);
    }
  }
  return copies.map((c, p) => {
    const raw = whole.get(p);
    if (raw !== undefined) return raw;
    let text = JSON.stringify(c);
    for (const [placeholder, replacement] of placed) text = text.replace(placeholder, replacement);
    return text;
  });
}

/** Splits bytes at random boundaries, so decoders also see chunks cut anywhere. */
function pieces(body: Buffer, rand: () => number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < body.length;) {
    const n = 1 + Math.floor(rand() * 200);
    out.push(body.subarray(i, i + n));
    i += n;
  }
  return out;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const header = (value: string) => ({ type: 'string' as const, value });

interface Target {
  name: string;
  /** The recorded streams as payload lists, with what frames each payload. */
  streams: { payloads: Json[]; frames: string[] }[];
  /** Whole non-stream bodies to mutate. */
  responses: Json[];
  /** Error bodies to mutate (the text of a non-2xx answer). */
  errorBodies: Json[];
  body(payloads: string[], frames: string[]): Buffer;
  decoder(): StreamDecoder;
  decodeResponse(body: unknown): CanonicalEvent[];
  mapError(status: number, text: string): GatewayError;
}

const openAI: Target = {
  name: 'openai-compatible',
  streams: openAICompatibleRecordings.map((name) => {
    const frames = openAIPayloads(name).filter((f) => f.data !== '[DONE]');
    return { payloads: frames.map((f) => JSON.parse(f.data) as Json), frames: frames.map((f) => f.event ?? '') };
  }),
  responses: [
    {
      id: 'chatcmpl-1',
      model: 'gpt-x',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Hi',
            refusal: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          logprobs: { content: [{ token: 'Hi', logprob: -1, bytes: [72, 105], top_logprobs: [] }] },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    },
  ],
  errorBodies: [{ error: { message: 'bad', type: 'invalid_request_error', param: 'x', code: 'c' } }, { detail: [{ msg: 'a' }] }],
  body: (payloads, frames) =>
    Buffer.from(`${payloads.map((p, i) => `${frames[i] ? `event: ${frames[i]}\n` : ''}data: ${p}\n\n`).join('')}data: [DONE]\n\n`),
  decoder: () => createSseStreamDecoder('fuzz', createOpenAICompatibleFrameDecoder({ provider: 'fuzz', splitThinkTags: true })),
  decodeResponse: (body) => decodeOpenAICompatibleResponse(body, { provider: 'fuzz', splitThinkTags: false }),
  mapError: (status, text) => mapOpenAICompatibleError('fuzz', status, {}, text),
};

const anthropicRecordings = listFixtures('anthropic', ['.sse', '.jsonl']);
const anthropic: Target = {
  name: 'anthropic',
  streams: anthropicRecordings.map((name) => {
    const payloads = anthropicPayloads(name) as Json[];
    return { payloads, frames: payloads.map((p) => String((p as { type?: unknown }).type)) };
  }),
  responses: [
    {
      id: 'msg_1',
      type: 'message',
      model: 'claude-x',
      content: [
        { type: 'thinking', thinking: 't', signature: 's' },
        { type: 'text', text: 'Hi' },
        { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 3, output_tokens: 2, cache_read_input_tokens: 1 },
    },
  ],
  errorBodies: [{ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
  body: (payloads, frames) => Buffer.from(payloads.map((p, i) => `event: ${frames[i]}\ndata: ${p}\n\n`).join('')),
  decoder: createAnthropicStreamDecoder,
  decodeResponse: decodeAnthropicResponse,
  mapError: (status, text) => mapAnthropicError(status, {}, text),
};

const geminiRecordings = listFixtures('gemini', ['.sse', '.jsonl']);
const google: Target = {
  name: 'google',
  streams: geminiRecordings.map((name) => {
    const payloads = geminiPayloads(name) as Json[];
    return { payloads, frames: payloads.map(() => '') };
  }),
  responses: geminiRecordings.map((name) => geminiResponseOf(name) as Json),
  errorBodies: [{ error: { code: 400, message: 'bad key', status: 'INVALID_ARGUMENT', details: [{ reason: 'API_KEY_INVALID' }] } }],
  body: (payloads) => Buffer.from(payloads.map((p) => `data: ${p}\r\n\r\n`).join('')),
  decoder: () => createGeminiStreamDecoder({ provider: 'fuzz' }),
  decodeResponse: (body) => decodeGeminiResponse(body, { provider: 'fuzz' }),
  mapError: (status, text) => mapGoogleError('fuzz', status, {}, text),
};

/** Bedrock recordings as `{"<eventType>": payload}` values; the event type travels as a header. */
const bedrockStreams = listFixtures('bedrock', ['.b64'])
  .map((name) =>
    eventStreamMessages(bedrockBody(name)).map((m) => {
      const type = m.headers[':event-type']?.value ?? m.headers[':exception-type']?.value;
      return { [String(type)]: JSON.parse(toUtf8(m.body)) as Json };
    }),
  )
  .concat([decodedEvents('bedrock/converse-reasoning-decoded.jsonl').map((e) => ({ [e.type]: e.payload as Json }))]);

const bedrock: Target = {
  name: 'bedrock',
  streams: bedrockStreams.map((payloads) => ({ payloads, frames: payloads.map((p) => Object.keys(p as object)[0]) })),
  responses: [
    {
      output: {
        message: {
          role: 'assistant',
          content: [
            { reasoningContent: { reasoningText: { text: 't', signature: 's' } } },
            { text: 'Hi' },
            { toolUse: { toolUseId: 't1', name: 'f', input: { a: 1 } } },
          ],
        },
      },
      stopReason: 'tool_use',
      usage: { inputTokens: 3, outputTokens: 2 },
    },
  ],
  errorBodies: [{ message: 'The provided model identifier is invalid.', __type: 'ValidationException' }],
  body: (payloads, frames) =>
    Buffer.concat(
      payloads.map((p, i) => {
        // The wrapper object's one value is the message body; a mutated wrapper is sent whole.
        const prefix = `{${JSON.stringify(frames[i])}:`;
        const body = p.startsWith(prefix) && p.endsWith('}') ? p.slice(prefix.length, -1) : p;
        const kind = frames[i].endsWith('Exception') ? 'exception' : 'event';
        return Buffer.from(
          codec.encode({
            headers: { [`:${kind}-type`]: header(frames[i]), ':content-type': header('application/json'), ':message-type': header(kind) },
            body: fromUtf8(body),
          }),
        );
      }),
    ),
  decoder: () => createBedrockStreamDecoder('fuzz'),
  decodeResponse: (body) => decodeBedrockResponse(body, 'fuzz'),
  mapError: (status, text) => mapBedrockError(status, {}, text),
};

const count = z.number().int().min(0);
const choice = z.number().int().min(0).max(127);
const tokenLogprob = z.object({ token: z.string(), logprob: z.number(), bytes: z.array(z.number().int()).nullable() });
const logprobs = z.array(tokenLogprob.extend({ top_logprobs: z.array(tokenLogprob) })).optional();

/** What a decoder may emit: the canonical event union with every field typed. */
const canonicalEvent = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('start'),
    upstreamId: z.string().optional(),
    upstreamModel: z.string().optional(),
    systemFingerprint: z.string().nullable().optional(),
    serviceTier: z.string().nullable().optional(),
  }),
  z.object({ type: z.literal('text'), choice, text: z.string(), logprobs }),
  z.object({ type: z.literal('refusal'), choice, text: z.string(), logprobs }),
  z.object({
    type: z.literal('reasoning'),
    choice,
    text: z.string(),
    signature: z.string().optional(),
    redacted: z.string().optional(),
  }),
  z.object({
    type: z.literal('annotation'),
    choice,
    annotation: z.object({
      type: z.literal('url_citation'),
      url: z.string(),
      title: z.string(),
      startIndex: count,
      endIndex: count,
      content: z.string().optional(),
    }),
  }),
  z.object({ type: z.literal('tool-call-start'), choice, index: count, id: z.string(), name: z.string() }),
  z.object({ type: z.literal('tool-call-delta'), choice, index: count, arguments: z.string() }),
  z.object({
    type: z.literal('finish'),
    choice,
    reason: z.enum(['stop', 'length', 'tool_calls', 'content_filter']),
    rawReason: z.string().optional(),
  }),
  z.object({ type: z.literal('usage'), usage: z.object({ inputTokens: count, outputTokens: count }).loose() }),
  z.object({ type: z.literal('error'), error: z.instanceof(GatewayError) }),
  z.object({ type: z.literal('end') }),
  // A content filter's verdicts: the prompt's (no choice, a list) or a choice's (an object).
  z.object({
    type: z.literal('content-filter'),
    choice: choice.nullable(),
    results: z.union([z.array(z.unknown()), z.record(z.string(), z.unknown())]),
  }),
]);

/** The events up to the first error (the pipeline stops there), each checked. */
function checkEvents(events: CanonicalEvent[], label: string): CanonicalEvent[] {
  const out: CanonicalEvent[] = [];
  for (const event of events) {
    const checked = canonicalEvent.safeParse(event);
    assert.ok(checked.success, `${label}: ${JSON.stringify(checked.error?.issues[0])} in ${JSON.stringify(event).slice(0, 300)}`);
    if (event.type === 'error') assertUpstreamError(event.error, label);
    out.push(event);
    if (event.type === 'error') break;
  }
  return out;
}

function assertUpstreamError(error: GatewayError, label: string): void {
  assert.ok(Number.isInteger(error.status) && error.status >= 400 && error.status <= 599, `${label}: status ${error.status}`);
  assert.notEqual(error.status, 500, label);
  assert.equal(typeof error.message, 'string', label);
  assert.equal(typeof error.code, 'string', label);
  assert.ok(error.param === null || typeof error.param === 'string', label);
}

/** Data frames of an SSE text, each of which must be JSON. */
function assertJsonFrames(wire: string, label: string): void {
  for (const block of wire.split('\n\n')) {
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => l.slice(6))
      .join('\n');
    if (!data || data === '[DONE]') continue;
    assert.doesNotThrow(() => JSON.parse(data), `${label}: not JSON: ${data.slice(0, 300)}`);
  }
}

/** The events through both client surfaces, as the pipeline would send them. */
function encode(events: CanonicalEvent[], label: string): void {
  const chat = new ChatChunkEncoder({
    id: 'chatcmpl-f',
    created: 1,
    model: 'fuzz/m',
    provider: 'fuzz',
    includeUsage: true,
    usageExtensions: false,
    stream: { ...STREAM_PROFILES.openai.chat, vendorEvents: 'passthrough' },
  });
  const responses = new ResponsesEventEncoder({ id: 'resp_f', createdAt: 1, model: 'fuzz/m', request: { model: 'fuzz/m', input: 'hi' } });
  let chatWire = '';
  let responsesWire = '';
  for (const event of events) {
    chatWire += chat.encode(event);
    responsesWire += responses.encode(event);
  }
  const message = assemble(events);
  const usage = message.usage ?? { inputTokens: 0, outputTokens: 0, source: 'estimated' as const };
  const error = events.find((e) => e.type === 'error');
  if (error?.type === 'error') {
    chatWire += chat.errorFrame(error.error);
    responsesWire += responses.failure(error.error, usage);
  } else {
    chatWire += chat.usageFrame(usage);
    responsesWire += responses.closing(usage);
  }
  assertJsonFrames(chatWire, `${label} (chat)`);
  assertJsonFrames(responsesWire, `${label} (responses)`);
  JSON.stringify(encodeCompletion(message, { id: 'chatcmpl-f', created: 1, model: 'fuzz/m' }));
}

describe('regression: malformed upstream chunks were reported as sluice bugs (seeded fuzz)', () => {
  for (const target of [openAI, anthropic, google, bedrock]) {
    it(`${target.name}: mutated recordings decode to well-typed events or upstream_malformed_stream, never a throw`, () => {
      const rand = prng(SEED);
      let failures = 0;
      for (let n = 0; n < CASES_PER_PROVIDER; n++) {
        const stream = target.streams[Math.floor(rand() * target.streams.length)];
        const payloads = mutate(stream.payloads, rand);
        const label = `${target.name} case ${n}`;
        const events = decodeAll(target.decoder(), pieces(target.body(payloads, stream.frames), rand));
        const kept = checkEvents(events, label);
        if (kept.some((e) => e.type === 'error')) failures++;
        encode(kept, label);

        const [response] = mutate([target.responses[Math.floor(rand() * target.responses.length)]], rand);
        encode(checkEvents(target.decodeResponse(JSON.parse(response)), `${label} (response)`), `${label} (response)`);

        const [errorBody] = mutate([target.errorBodies[Math.floor(rand() * target.errorBodies.length)]], rand);
        const status = [400, 401, 404, 429, 500, 503, 529][Math.floor(rand() * 7)];
        const error = target.mapError(status, errorBody);
        assert.ok(error instanceof GatewayError, label);
        assert.ok(Number.isInteger(error.status) && error.status >= 400 && error.status <= 599, `${label}: status ${error.status}`);
        assert.equal(typeof error.message, 'string', label);
      }
      // Some mutations are harmless (an ignored field), most are not: both paths were exercised.
      assert.ok(failures > 10 && failures < CASES_PER_PROVIDER, `${failures} of ${CASES_PER_PROVIDER} failed the stream`);
    });
  }
});

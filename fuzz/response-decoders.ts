import fc from 'fast-check';
import type { CanonicalEvent } from '../src/protocol/canonical/events.ts';
import { decodeAnthropicResponse } from '../src/providers/anthropic/decode-response.ts';
import { decodeBedrockResponse } from '../src/providers/bedrock/decode-response.ts';
import { decodeGeminiResponse } from '../src/providers/google/decode-response.ts';
import { decodeOpenAICompatibleResponse } from '../src/providers/openai-compatible/decode-response.ts';
import { listFixtures, readFixture } from '../test/helpers/fixtures.ts';
import { geminiResponseOf } from '../test/helpers/gemini-fixtures.ts';
import { checkEvents } from './check-events.ts';
import { pick } from './hostile-values.ts';
import { editJson, jsonEdit } from './mutate-body.ts';
import { anthropicRecordings, openAIRecordings } from './recordings.ts';
import { type FuzzTarget, fuzzTarget } from './run-targets.ts';

const token = { token: 'Hi', logprob: -0.1, bytes: [72, 105], top_logprobs: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105] }] };

/** Whole answers in each provider's documented shape, with every field the decoders read. */
const openAIBodies = [
  {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-x',
    system_fingerprint: 'fp',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: '<think>hm</think>Hi',
          reasoning_content: 'r',
          refusal: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
          annotations: [
            { type: 'url_citation', url_citation: { url: 'https://a.example', title: 'A', start_index: 0, end_index: 2 } },
          ],
        },
        logprobs: { content: [token], refusal: null },
        finish_reason: 'tool_calls',
      },
      {
        index: 1,
        message: {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: [{ type: 'text', text: 't' }] },
            { type: 'text', text: 'x' },
          ],
        },
        finish_reason: 'stop',
      },
    ],
    usage: {
      prompt_tokens: 5,
      completion_tokens: 3,
      total_tokens: 8,
      prompt_tokens_details: { cached_tokens: 1 },
      completion_tokens_details: { reasoning_tokens: 1 },
    },
  },
  { error: { message: 'Rate limited', code: 429, metadata: { raw: 'x' } } },
];

const anthropicBodies = [
  {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    model: 'claude-x',
    content: [
      { type: 'thinking', thinking: 'Need the weather.', signature: 'sig' },
      { type: 'redacted_thinking', data: 'enc' },
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: { location: 'Paris' } },
      { type: 'tool_use', id: 'toolu_b', name: 'list_all', input: {} },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 20, cache_creation_input_tokens: 5, cache_read_input_tokens: 100, output_tokens: 42 },
  },
  { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
];

const bedrockBodies = [
  {
    output: {
      message: {
        role: 'assistant',
        content: [
          { reasoningContent: { reasoningText: { text: 'The user has greeted me.', signature: 'sig' } } },
          { reasoningContent: { redactedContent: 'enc' } },
          { text: 'Hello! Let me check the time.' },
          { toolUse: { toolUseId: 'tooluse_1', name: 'get_time', input: { zone: 'UTC' } } },
        ],
      },
    },
    stopReason: 'tool_use',
    usage: { inputTokens: 36, outputTokens: 73, totalTokens: 109, cacheReadInputTokens: 1, cacheWriteInputTokens: 2 },
    metrics: { latencyMs: 1999 },
  },
  JSON.parse(readFixture('bedrock/converse-error-400-invalid-model.json').toString('utf8')),
];

/** Stream payloads are answers too for these decoders (the OpenAI one reads `delta` and `message` alike). */
const streamPayloads = (recordings: typeof openAIRecordings) =>
  recordings.flatMap((r) => r.payloads.filter((p): p is string => p !== null));

const geminiBodies = listFixtures('gemini', ['.sse', '.jsonl']).map(geminiResponseOf);

const decoders: Record<string, { seeds: string[]; decode: (body: unknown) => CanonicalEvent[] }> = {
  'openai-compatible': {
    seeds: [...openAIBodies.map((b) => JSON.stringify(b)), ...streamPayloads(openAIRecordings)],
    decode: (body) => decodeOpenAICompatibleResponse(body, { provider: 'up', splitThinkTags: true }),
  },
  anthropic: {
    seeds: [...anthropicBodies.map((b) => JSON.stringify(b)), ...streamPayloads(anthropicRecordings)],
    decode: decodeAnthropicResponse,
  },
  google: {
    seeds: [...geminiBodies, geminiBodies].map((b) => JSON.stringify(b)),
    decode: (body) => {
      let n = 0;
      return decodeGeminiResponse(body, { provider: 'google', newCallId: () => `call_${n++}` });
    },
  },
  bedrock: { seeds: bedrockBodies.map((b) => JSON.stringify(b)), decode: (body) => decodeBedrockResponse(body, 'bedrock') },
};

function responseDecoderTarget(name: string): FuzzTarget {
  const { seeds, decode } = decoders[name];
  return fuzzTarget({
    name: `${name}-response`,
    family: 'response decoders',
    what: `${name} decode-response over ${seeds.length} documented or recorded bodies with up to 3 fields made hostile or deleted, and arbitrary JSON: no throw, events within the canonical contract`,
    input: () =>
      fc.oneof(
        { weight: 6, arbitrary: fc.record({ seed: pick(seeds), edits: fc.array(jsonEdit, { minLength: 1, maxLength: 3 }) }) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => ({ seed: JSON.stringify(v) ?? 'null', edits: [] })) },
      ),
    assert({ seed, edits }) {
      let text = seed;
      for (const edit of edits) text = editJson(text, edit) ?? text;
      checkEvents(decode(JSON.parse(text)));
    },
  });
}

export const responseDecoderTargets: FuzzTarget[] = Object.keys(decoders).map(responseDecoderTarget);

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { anthropicPayloads, anthropicStreamBody } from '../../../test/helpers/anthropic-fixtures.ts';
import { args, call, finish, reasoning, signature, text } from '../../../test/helpers/canonical-events.ts';
import { splitRandomly } from '../../../test/helpers/fake-upstream.ts';
import { upstreamHttpError } from '../../errors/upstream-error.ts';
import { createAnthropicStreamDecoder } from '../../providers/anthropic/decode-stream.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import type { Usage } from '../../protocol/canonical/usage.ts';
import { MessagesEventEncoder, PING_FRAME } from './encode-stream.ts';

const identity = { id: 'msg_r1', model: 'openai/gpt-4o' };
const usage: Usage = { inputTokens: 20, outputTokens: 9, cachedInputTokens: 6, cacheWriteTokens: 4, source: 'provider' };
const wireUsage = { input_tokens: 10, output_tokens: 9, cache_creation_input_tokens: 4, cache_read_input_tokens: 6 };

/** The payloads of an SSE text, each checked to be named by its own `type`. */
function payloads(sse: string): Record<string, any>[] {
  return sse
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      const payload = JSON.parse(dataLine.slice('data: '.length));
      assert.equal(eventLine, `event: ${payload.type}`);
      return payload;
    });
}

function encodeAll(events: CanonicalEvent[], end: Usage = usage): { sse: string; encoder: MessagesEventEncoder } {
  const encoder = new MessagesEventEncoder(identity);
  let sse = encoder.start({ inputTokens: 20, outputTokens: 0, cachedInputTokens: 6, cacheWriteTokens: 4, source: 'provider' });
  for (const e of events) sse += encoder.encode(e);
  return { sse: sse + encoder.closing(end), encoder };
}

const messageStart = {
  type: 'message_start',
  message: {
    id: 'msg_r1',
    type: 'message',
    role: 'assistant',
    model: 'openai/gpt-4o',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { ...wireUsage, output_tokens: 0 },
  },
};
const blockStart = (index: number, content_block: unknown) => ({ type: 'content_block_start', index, content_block });
const blockDelta = (index: number, delta: unknown) => ({ type: 'content_block_delta', index, delta });
const blockStop = (index: number) => ({ type: 'content_block_stop', index });
const tail = (stop_reason: string) => [
  { type: 'message_delta', delta: { stop_reason, stop_sequence: null }, usage: wireUsage },
  { type: 'message_stop' },
];

describe('MessagesEventEncoder', () => {
  it('streams thinking with its signature, text, then a tool call, as Anthropic orders the blocks', () => {
    const { sse, encoder } = encodeAll([
      { type: 'start' },
      reasoning('Let me'),
      reasoning(' think.'),
      signature('sig-1'),
      text('Checking'),
      text(' the weather.'),
      call(0, 'call_1', 'get_weather'),
      args(0, '{"city":'),
      args(0, '"Paris"}'),
      finish('tool_calls', 'tool_calls'),
      { type: 'usage', usage },
    ]);
    assert.deepEqual(payloads(sse), [
      messageStart,
      blockStart(0, { type: 'thinking', thinking: '', signature: '' }),
      blockDelta(0, { type: 'thinking_delta', thinking: 'Let me' }),
      blockDelta(0, { type: 'thinking_delta', thinking: ' think.' }),
      blockDelta(0, { type: 'signature_delta', signature: 'sig-1' }),
      blockStop(0),
      blockStart(1, { type: 'text', text: '' }),
      blockDelta(1, { type: 'text_delta', text: 'Checking' }),
      blockDelta(1, { type: 'text_delta', text: ' the weather.' }),
      blockStop(1),
      blockStart(2, { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} }),
      blockDelta(2, { type: 'input_json_delta', partial_json: '{"city":' }),
      blockDelta(2, { type: 'input_json_delta', partial_json: '"Paris"}' }),
      blockStop(2),
      ...tail('tool_use'),
    ]);
    assert.deepEqual(encoder.message(usage), {
      id: 'msg_r1',
      type: 'message',
      role: 'assistant',
      model: 'openai/gpt-4o',
      content: [
        { type: 'thinking', thinking: 'Let me think.', signature: 'sig-1' },
        { type: 'text', text: 'Checking the weather.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: wireUsage,
    });
  });

  it('maps finish reasons, keeps an Anthropic reason a provider said, and names tool calls that came without an id', () => {
    const reasonOf = (e: CanonicalEvent) => payloads(encodeAll([text('x'), e]).sse).at(-2)?.delta.stop_reason;
    assert.equal(reasonOf(finish('length', 'MAX_TOKENS')), 'max_tokens');
    assert.equal(reasonOf(finish('stop', 'stop')), 'end_turn');
    assert.equal(reasonOf(finish('stop', 'stop_sequence')), 'stop_sequence');
    assert.equal(reasonOf(finish('content_filter', 'SAFETY')), 'refusal');
    const { encoder } = encodeAll([call(0, '', 'lookup'), args(0, 'not json'), finish('tool_calls', 'STOP')]);
    assert.deepEqual((encoder.message(usage).content as unknown[])[0], {
      type: 'tool_use',
      id: 'toolu_msg_r1_0',
      name: 'lookup',
      input: { _raw: 'not json' },
    });
  });

  it('opens a new thinking block after a signature, and sends redacted thinking whole', () => {
    const { sse } = encodeAll([
      reasoning('a'),
      signature('s1'),
      { type: 'reasoning', choice: 0, text: '', redacted: 'opaque' },
      reasoning('b'),
      signature('s2'),
      finish('stop', 'end_turn'),
    ]);
    assert.deepEqual(payloads(sse).slice(1, -2), [
      blockStart(0, { type: 'thinking', thinking: '', signature: '' }),
      blockDelta(0, { type: 'thinking_delta', thinking: 'a' }),
      blockDelta(0, { type: 'signature_delta', signature: 's1' }),
      blockStop(0),
      blockStart(1, { type: 'redacted_thinking', data: 'opaque' }),
      blockStop(1),
      blockStart(2, { type: 'thinking', thinking: '', signature: '' }),
      blockDelta(2, { type: 'thinking_delta', thinking: 'b' }),
      blockDelta(2, { type: 'signature_delta', signature: 's2' }),
      blockStop(2),
    ]);
  });

  it('renders a failure as an error event of Anthropic type, and its keep-alive as ping', () => {
    const encoder = new MessagesEventEncoder(identity);
    const overloaded = upstreamHttpError({ provider: 'google', status: 503, message: 'The model is overloaded.' });
    assert.deepEqual(payloads(encoder.failure(overloaded)), [
      { type: 'error', error: { type: 'overloaded_error', message: 'The model is overloaded.' } },
    ]);
    assert.deepEqual(payloads(PING_FRAME), [{ type: 'ping' }]);
  });

  for (const name of ['anthropic/thinking-signature.sse', 'anthropic/parallel-tool-use.sse', 'anthropic/prompt-cache-read.sse']) {
    it(`re-encodes ${name}, decoded at random splits, into the recording's own content events`, () => {
      const decoder = createAnthropicStreamDecoder();
      const events: CanonicalEvent[] = [];
      for (const piece of splitRandomly(anthropicStreamBody(name), 7, 30)) events.push(...decoder.push(piece));
      events.push(...decoder.end());
      const reported = events.filter((e) => e.type === 'usage').at(-1);
      assert.ok(reported?.type === 'usage');
      const { sse } = encodeAll(events, reported.usage);
      const recorded = anthropicPayloads(name).filter((p) => p.type !== 'ping');
      const mine = payloads(sse);
      // Empty deltas carry nothing and do not survive the canonical stream (it has no empty events).
      const empty = (p: Record<string, any>) =>
        p.type === 'content_block_delta' && !p.delta.text && !p.delta.thinking && !p.delta.partial_json && !p.delta.signature;
      const content = (list: Record<string, any>[]) => list.filter((p) => p.type.startsWith('content_block') && !empty(p));
      assert.deepEqual(content(mine), content(recorded));
      const delta = mine.find((p) => p.type === 'message_delta');
      const want = recorded.find((p) => p.type === 'message_delta');
      assert.equal(delta?.delta.stop_reason, want?.delta.stop_reason);
      assert.equal(delta?.usage.output_tokens, want?.usage.output_tokens);
      const startUsage = recorded[0].message.usage;
      assert.equal(delta?.usage.input_tokens, startUsage.input_tokens);
      assert.equal(delta?.usage.cache_read_input_tokens, startUsage.cache_read_input_tokens ?? 0);
    });
  }
});

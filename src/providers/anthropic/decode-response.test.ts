import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assemble } from '../../protocol/canonical/assemble.ts';
import { decodeAnthropicResponse } from './decode-response.ts';

describe('anthropic non-stream response decoder', () => {
  it('decodes thinking, text and tool calls in block order, numbering tools from 0', () => {
    const events = decodeAnthropicResponse({
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5-20250929',
      content: [
        { type: 'thinking', thinking: 'Need the weather.', signature: 'EqQBCgIYAhIM' },
        { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va' },
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: { location: 'Paris' } },
        { type: 'tool_use', id: 'toolu_b', name: 'list_all', input: {} },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 20, cache_creation_input_tokens: 5, cache_read_input_tokens: 100, output_tokens: 42 },
    });
    assert.deepEqual(events, [
      { type: 'start', upstreamId: 'msg_01', upstreamModel: 'claude-sonnet-4-5-20250929' },
      { type: 'reasoning', choice: 0, text: 'Need the weather.' },
      { type: 'reasoning', choice: 0, text: '', signature: 'EqQBCgIYAhIM' },
      { type: 'reasoning', choice: 0, text: '', redacted: 'EmwKAhgBEgy3va' },
      { type: 'text', choice: 0, text: 'Let me check.' },
      { type: 'tool-call-start', choice: 0, index: 0, id: 'toolu_a', name: 'get_weather' },
      { type: 'tool-call-delta', choice: 0, index: 0, arguments: '{"location":"Paris"}' },
      { type: 'tool-call-start', choice: 0, index: 1, id: 'toolu_b', name: 'list_all' },
      { type: 'tool-call-delta', choice: 0, index: 1, arguments: '{}' },
      { type: 'finish', choice: 0, reason: 'tool_calls', rawReason: 'tool_use' },
      {
        type: 'usage',
        usage: { inputTokens: 125, outputTokens: 42, cachedInputTokens: 100, cacheWriteTokens: 5, source: 'provider' },
      },
    ]);
    const choice = assemble(events).choices[0];
    assert.equal(choice.reasoning, 'Need the weather.');
    assert.equal(choice.reasoningSignature, 'EqQBCgIYAhIM');
    assert.deepEqual(choice.redactedReasoning, ['EmwKAhgBEgy3va']);
    assert.deepEqual(choice.toolCalls, [
      { id: 'toolu_a', name: 'get_weather', arguments: '{"location":"Paris"}' },
      { id: 'toolu_b', name: 'list_all', arguments: '{}' },
    ]);
  });

  it('decodes a plain answer', () => {
    assert.deepEqual(
      decodeAnthropicResponse({
        id: 'msg_02',
        type: 'message',
        model: 'claude-haiku-4-5-20251001',
        content: [{ type: 'text', text: '1\n2\n3' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 15, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 9 },
      }),
      [
        { type: 'start', upstreamId: 'msg_02', upstreamModel: 'claude-haiku-4-5-20251001' },
        { type: 'text', choice: 0, text: '1\n2\n3' },
        { type: 'finish', choice: 0, reason: 'stop', rawReason: 'end_turn' },
        { type: 'usage', usage: { inputTokens: 15, outputTokens: 9, cachedInputTokens: 0, cacheWriteTokens: 0, source: 'provider' } },
      ],
    );
  });

  it('turns an error body into an error event, and a body without content into a malformed-response error', () => {
    const [error] = decodeAnthropicResponse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    assert.equal(error.type, 'error');
    assert.deepEqual([error.error.status, error.error.message], [503, 'Overloaded']);
    const [malformed] = decodeAnthropicResponse({ id: 'x', type: 'message' });
    assert.equal(malformed.type, 'error');
    assert.deepEqual([malformed.error.code, malformed.error.status], ['upstream_malformed_stream', 502]);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SONNET4_SIGNATURE } from '../../../test/helpers/bedrock-fixtures.ts';
import { decodeBedrockResponse } from './decode-response.ts';

describe('decodeBedrockResponse', () => {
  it('decodes reasoning with its signature, text and a tool call, in order, with usage', () => {
    // The Converse response shape (API reference, Converse "Response Syntax"), holding what
    // fixtures/bedrock/converse-reasoning-claude-sonnet4.b64 streamed plus a tool call.
    const body = {
      output: {
        message: {
          role: 'assistant',
          content: [
            { reasoningContent: { reasoningText: { text: 'The user has greeted me.', signature: SONNET4_SIGNATURE } } },
            { text: 'Hello! Let me check the time.' },
            { toolUse: { toolUseId: 'tooluse_1', name: 'get_time', input: { zone: 'UTC' } } },
            { toolUse: { toolUseId: 'tooluse_2', name: 'get_date', input: {} } },
          ],
        },
      },
      stopReason: 'tool_use',
      usage: { inputTokens: 36, outputTokens: 73, totalTokens: 109, cacheReadInputTokens: 0 },
      metrics: { latencyMs: 1999 },
    };
    assert.deepEqual(decodeBedrockResponse(body, 'bedrock'), [
      { type: 'start' },
      { type: 'reasoning', choice: 0, text: 'The user has greeted me.', signature: SONNET4_SIGNATURE },
      { type: 'text', choice: 0, text: 'Hello! Let me check the time.' },
      { type: 'tool-call-start', choice: 0, index: 0, id: 'tooluse_1', name: 'get_time' },
      { type: 'tool-call-delta', choice: 0, index: 0, arguments: '{"zone":"UTC"}' },
      { type: 'tool-call-start', choice: 0, index: 1, id: 'tooluse_2', name: 'get_date' },
      { type: 'tool-call-delta', choice: 0, index: 1, arguments: '{}' },
      { type: 'finish', choice: 0, reason: 'tool_calls', rawReason: 'tool_use' },
      { type: 'usage', usage: { inputTokens: 36, outputTokens: 73, cachedInputTokens: 0, source: 'provider' } },
    ]);
  });

  it('keeps redacted reasoning redacted', () => {
    const body = {
      output: { message: { content: [{ reasoningContent: { redactedContent: 'RW5jcnlwdGVk' } }, { text: 'Done.' }] } },
      stopReason: 'end_turn',
      usage: { inputTokens: 5, outputTokens: 9 },
    };
    assert.deepEqual(decodeBedrockResponse(body, 'bedrock'), [
      { type: 'start' },
      { type: 'reasoning', choice: 0, text: '', redacted: 'RW5jcnlwdGVk' },
      { type: 'text', choice: 0, text: 'Done.' },
      { type: 'finish', choice: 0, reason: 'stop', rawReason: 'end_turn' },
      { type: 'usage', usage: { inputTokens: 5, outputTokens: 9, source: 'provider' } },
    ]);
  });

  it('a body without output.message.content is a malformed-response error', () => {
    const [event, ...rest] = decodeBedrockResponse({ message: 'odd' }, 'bedrock');
    assert.deepEqual(rest, []);
    assert.equal(event.type === 'error' && event.error.code, 'upstream_malformed_stream');
  });

  it('makes up an empty tool call id; a tool call without a name is a malformed-response error', () => {
    const body = (toolUseId: string, name: string) => ({
      output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId, name, input: {} } }] } },
      stopReason: 'tool_use',
    });
    const started = decodeBedrockResponse(body('', 'get_time'), 'bedrock').find((e) => e.type === 'tool-call-start');
    assert.match((started as { id: string }).id, /^call_[\w-]{16}$/);
    const [event, ...rest] = decodeBedrockResponse(body('tooluse_1', ''), 'bedrock');
    assert.deepEqual(rest, []);
    assert.equal(event.type === 'error' && event.error.code, 'upstream_malformed_stream');
  });
});

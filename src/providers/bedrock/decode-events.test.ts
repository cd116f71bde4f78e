import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { decodedEvents, expectedBedrockEvents } from '../../../test/helpers/bedrock-fixtures.ts';
import { createConverseEventDecoder } from './decode-events.ts';

function run(events: { type: string; payload: unknown }[]): CanonicalEvent[] {
  const decoder = createConverseEventDecoder('bedrock');
  const out: CanonicalEvent[] = [];
  for (const e of events) decoder.event(e.type, e.payload, out);
  return out;
}

describe('ConverseStream event decoder', () => {
  it('decodes the decoded-events recording (reasoning, signature, text) to the whole expected list', () => {
    const name = 'bedrock/converse-reasoning-decoded.jsonl';
    assert.deepEqual(run(decodedEvents(name)), expectedBedrockEvents[name]);
  });

  it('gives parallel tool calls dense indexes in start order, "{}" for a call without input', () => {
    const events = run([
      { type: 'messageStart', payload: { role: 'assistant' } },
      { type: 'contentBlockStart', payload: { contentBlockIndex: 1, start: { toolUse: { toolUseId: 'tooluse_a', name: 'get_time' } } } },
      { type: 'contentBlockStop', payload: { contentBlockIndex: 1 } },
      { type: 'contentBlockStart', payload: { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'tooluse_b', name: 'get_weather' } } } },
      { type: 'contentBlockDelta', payload: { contentBlockIndex: 2, delta: { toolUse: { input: '' } } } },
      { type: 'contentBlockDelta', payload: { contentBlockIndex: 2, delta: { toolUse: { input: '{"city":' } } } },
      { type: 'contentBlockDelta', payload: { contentBlockIndex: 2, delta: { toolUse: { input: '"Oslo"}' } } } },
      { type: 'contentBlockStop', payload: { contentBlockIndex: 2 } },
      { type: 'messageStop', payload: { stopReason: 'tool_use' } },
      { type: 'metadata', payload: { usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 }, metrics: { latencyMs: 9 } } },
    ]);
    assert.deepEqual(events, [
      { type: 'start' },
      { type: 'tool-call-start', choice: 0, index: 0, id: 'tooluse_a', name: 'get_time' },
      { type: 'tool-call-delta', choice: 0, index: 0, arguments: '{}' },
      { type: 'tool-call-start', choice: 0, index: 1, id: 'tooluse_b', name: 'get_weather' },
      { type: 'tool-call-delta', choice: 0, index: 1, arguments: '{"city":' },
      { type: 'tool-call-delta', choice: 0, index: 1, arguments: '"Oslo"}' },
      { type: 'finish', choice: 0, reason: 'tool_calls', rawReason: 'tool_use' },
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 5, source: 'provider' } },
    ]);
  });

  it('keeps redacted reasoning as redacted, adds cache tokens into input, maps stop reasons', () => {
    const events = run([
      { type: 'messageStart', payload: { role: 'assistant' } },
      { type: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: 'RW5jcnlwdGVk' } } } },
      { type: 'contentBlockStop', payload: { contentBlockIndex: 0 } },
      { type: 'contentBlockDelta', payload: { contentBlockIndex: 1, delta: { text: 'Partial' } } },
      { type: 'messageStop', payload: { stopReason: 'max_tokens' } },
      {
        type: 'metadata',
        payload: { usage: { inputTokens: 3, outputTokens: 7, cacheReadInputTokens: 100, cacheWriteInputTokens: 20, totalTokens: 130 } },
      },
    ]);
    assert.deepEqual(events, [
      { type: 'start' },
      { type: 'reasoning', choice: 0, text: '', redacted: 'RW5jcnlwdGVk' },
      { type: 'text', choice: 0, text: 'Partial' },
      { type: 'finish', choice: 0, reason: 'length', rawReason: 'max_tokens' },
      {
        type: 'usage',
        usage: { inputTokens: 123, outputTokens: 7, cachedInputTokens: 100, cacheWriteTokens: 20, source: 'provider' },
      },
    ]);
  });

  it('says start even when the stream skips messageStart, and only one finish', () => {
    const events = run([
      { type: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: 'Hi' } } },
      { type: 'messageStop', payload: { stopReason: 'guardrail_intervened' } },
      { type: 'messageStop', payload: { stopReason: 'end_turn' } },
      { type: 'someFutureEvent', payload: { anything: true } },
    ]);
    assert.deepEqual(events, [
      { type: 'start' },
      { type: 'text', choice: 0, text: 'Hi' },
      { type: 'finish', choice: 0, reason: 'content_filter', rawReason: 'guardrail_intervened' },
    ]);
  });

  it('a toolUse delta for a block that never started is a malformed-stream error', () => {
    const [start, error] = run([
      { type: 'messageStart', payload: {} },
      { type: 'contentBlockDelta', payload: { contentBlockIndex: 4, delta: { toolUse: { input: '{}' } } } },
    ]);
    assert.deepEqual(start, { type: 'start' });
    assert.equal(error.type === 'error' && error.error.code, 'upstream_malformed_stream');
  });

  it('makes up the id of a toolUse block whose id is empty, and fails the stream on one without a name', () => {
    const toolStart = (toolUseId: string, name: string) => ({
      type: 'contentBlockStart',
      payload: { contentBlockIndex: 0, start: { toolUse: { toolUseId, name } } },
    });
    const [, started] = run([{ type: 'messageStart', payload: {} }, toolStart('', 'get_time')]);
    assert.equal(started?.type, 'tool-call-start');
    assert.match((started as { id: string }).id, /^call_[\w-]{16}$/);

    const [, error] = run([{ type: 'messageStart', payload: {} }, toolStart('tooluse_1', '')]);
    assert.equal(error?.type === 'error' && error.error.code, 'upstream_malformed_stream');
  });

  it('exceptions become errors with the status they stand for and the message kept', () => {
    const cases: [string, number, string][] = [
      ['throttlingException', 429, 'rate_limit_exceeded'],
      ['serviceUnavailableException', 503, 'upstream_overloaded'],
      ['modelStreamErrorException', 502, 'upstream_error'],
      ['internalServerException', 502, 'upstream_error'],
      ['validationException', 400, 'invalid_request'],
      ['somethingNewException', 502, 'upstream_error'],
    ];
    for (const [type, status, code] of cases) {
      const out: CanonicalEvent[] = [];
      createConverseEventDecoder('bedrock').exception(type, { message: `${type} happened` }, out);
      assert.equal(out.length, 1);
      const e = out[0];
      assert.ok(e.type === 'error');
      assert.deepEqual(
        { status: e.error.status, message: e.error.message, code: e.error.code, upstreamType: e.error.upstreamType, provider: e.error.provider },
        { status, message: `${type} happened`, code, upstreamType: type, provider: 'bedrock' },
        type,
      );
    }
  });
});

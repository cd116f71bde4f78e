import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import { addUsage, LoopStep } from './loop-step.ts';

const offer = { names: new Map([['calc__add', { server: 'calc', name: 'add' }]]), listed: [{ server: 'calc', tools: [] }] };
const start = (index: number, id: string, name: string): CanonicalEvent => ({ type: 'tool-call-start', choice: 0, index, id, name });
const delta = (index: number, args: string): CanonicalEvent => ({ type: 'tool-call-delta', choice: 0, index, arguments: args });

describe('LoopStep', () => {
  it('turns a call of an MCP tool into mcp events, and holds the finish, the usage and the end', () => {
    const step = new LoopStep(offer);
    const out = [
      { type: 'text', choice: 0, text: 'Let me add. ' },
      start(0, 'call_1', 'calc__add'),
      delta(0, '{"a":2}'),
      { type: 'finish', choice: 0, reason: 'tool_calls' },
      { type: 'usage', usage: { inputTokens: 3, outputTokens: 2, source: 'provider' } },
      { type: 'end' },
    ].flatMap((e) => step.pass(e as CanonicalEvent));
    assert.deepEqual(out, [
      { type: 'text', choice: 0, text: 'Let me add. ' },
      { type: 'mcp', step: { kind: 'call-start', id: 'call_1', server: 'calc', name: 'add' } },
      { type: 'mcp', step: { kind: 'call-arguments', id: 'call_1', delta: '{"a":2}' } },
    ]);
    assert.equal(step.finish?.reason, 'tool_calls');
    assert.deepEqual(step.usage, { inputTokens: 3, outputTokens: 2, source: 'provider' });
    assert.equal(step.ended, true);
    assert.equal(step.clientCalls, false);
    assert.deepEqual(step.assistantTurn(), {
      role: 'assistant',
      content: 'Let me add. ',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'calc__add', arguments: '{"a":2}' } }],
    });
  });

  it("passes a call of the client's own tool as it came", () => {
    const step = new LoopStep(offer);
    const events = [start(0, 'call_9', 'lookup'), delta(0, '{}')];
    assert.deepEqual(
      events.flatMap((e) => step.pass(e)),
      events,
    );
    assert.equal(step.clientCalls, true);
    assert.deepEqual(step.calls, []);
  });

  it('keeps a call under a named server that was not offered as an MCP call (the gateway refuses it)', () => {
    const step = new LoopStep(offer);
    step.pass(start(0, 'call_2', 'calc__secret'));
    assert.deepEqual(step.calls[0].tool, { server: 'calc', name: 'secret' });
  });

  it('carries the reasoning and its signature into the assistant turn', () => {
    const step = new LoopStep(offer);
    step.pass({ type: 'reasoning', choice: 0, text: 'hmm', signature: 'sig' });
    step.pass(start(0, 'call_1', 'calc__add'));
    const turn = step.assistantTurn();
    assert.equal(turn.reasoning_content, 'hmm');
    assert.equal(turn.reasoning_signature, 'sig');
    assert.equal(turn.content, null);
    assert.equal(turn.tool_calls?.[0].function.arguments, '{}');
  });
});

describe('addUsage', () => {
  it('sums every count, and is estimated when any step was', () => {
    const sum = addUsage(
      { inputTokens: 10, outputTokens: 5, cachedInputTokens: 2, source: 'provider' },
      { inputTokens: 20, outputTokens: 4, reasoningTokens: 1, source: 'estimated' },
    );
    assert.deepEqual(sum, { inputTokens: 30, outputTokens: 9, cachedInputTokens: 2, reasoningTokens: 1, source: 'estimated' });
    assert.deepEqual(addUsage(undefined, { inputTokens: 1, outputTokens: 1, source: 'provider' }), {
      inputTokens: 1,
      outputTokens: 1,
      source: 'provider',
    });
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bedrockFinishReason } from './finish-reason.ts';

describe('bedrockFinishReason', () => {
  it('maps every Converse stop reason', () => {
    const table = Object.fromEntries(
      [
        'end_turn',
        'stop_sequence',
        'max_tokens',
        'model_context_window_exceeded',
        'tool_use',
        'guardrail_intervened',
        'content_filtered',
        'something_new',
      ].map((raw) => [raw, bedrockFinishReason(raw, false)]),
    );
    assert.deepEqual(table, {
      end_turn: 'stop',
      stop_sequence: 'stop',
      max_tokens: 'length',
      model_context_window_exceeded: 'length',
      tool_use: 'tool_calls',
      guardrail_intervened: 'content_filter',
      content_filtered: 'content_filter',
      something_new: 'stop',
    });
  });

  it('a natural stop after tool calls is a tool turn; length and filters stay what they are', () => {
    assert.deepEqual(
      ['end_turn', 'stop_sequence', 'max_tokens', 'guardrail_intervened'].map((raw) => bedrockFinishReason(raw, true)),
      ['tool_calls', 'tool_calls', 'length', 'content_filter'],
    );
  });
});

describe('regression: a stopReason naming an Object.prototype key', () => {
  it('is an unknown reason (stop), not the prototype member', () => {
    for (const raw of ['constructor', '__proto__', 'toString']) assert.equal(bedrockFinishReason(raw, false), 'stop', raw);
  });
});

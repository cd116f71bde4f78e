import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { anthropicFinishReason } from './finish-reason.ts';

describe('anthropic finish reasons', () => {
  it('maps every documented stop_reason, and an unknown one to stop', () => {
    const raw = ['end_turn', 'stop_sequence', 'pause_turn', 'max_tokens', 'model_context_window_exceeded', 'tool_use', 'refusal', 'something_new'];
    assert.deepEqual(raw.map(anthropicFinishReason), ['stop', 'stop', 'stop', 'length', 'length', 'tool_calls', 'content_filter', 'stop']);
  });
});

describe('regression: a stop_reason naming an Object.prototype key', () => {
  it('is an unknown reason (stop), not the prototype member', () => {
    for (const raw of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) assert.equal(anthropicFinishReason(raw), 'stop', raw);
  });
});

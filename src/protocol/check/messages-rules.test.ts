import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { anthropicStreamBody } from '../../../test/helpers/anthropic-fixtures.ts';
import { named, violations } from '../../../test/helpers/check-streams.ts';

const ev = (payload: Record<string, unknown>) => named(String(payload.type), payload);
const start = ev({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: {} } });
const block = (index: number, type: string) => ev({ type: 'content_block_start', index, content_block: { type } });
const delta = (index: number, type: string) => ev({ type: 'content_block_delta', index, delta: { type } });
const stop = (index: number) => ev({ type: 'content_block_stop', index });
const end = [ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: {} }), ev({ type: 'message_stop' })];
const ping = ev({ type: 'ping' });

describe('Messages rules', () => {
  it('the recordings of Anthropic streams conform', () => {
    for (const name of ['anthropic/thinking-signature.sse', 'anthropic/parallel-tool-use.sse', 'anthropic/tool-use.sse']) {
      assert.deepEqual(violations(anthropicStreamBody(name).toString('utf8')), [], name);
    }
  });

  it('a conforming stream, pings anywhere and [DONE] at the end allowed', () => {
    const body = [ping, start, block(0, 'thinking'), delta(0, 'thinking_delta'), delta(0, 'signature_delta'), stop(0), ping];
    body.push(block(1, 'tool_use'), delta(1, 'input_json_delta'), stop(1), ...end, 'data: [DONE]\n\n');
    assert.deepEqual(violations(body), []);
  });

  it('message_start first, and an event name that matches the payload', () => {
    assert.deepEqual(violations([block(0, 'text'), start, stop(0), ...end], 'messages'), ['1:messages/start-first']);
    const renamed = [start, block(0, 'text'), stop(0), ...end].join('').replace('event: content_block_stop', 'event: block_stop');
    assert.deepEqual(violations(renamed), ['3:messages/event-type']);
  });

  it('blocks in order, one open at a time, deltas of their own kind', () => {
    assert.deepEqual(violations([start, block(1, 'text'), stop(1), ...end]), ['2:messages/blocks']);
    assert.deepEqual(violations([start, block(0, 'text'), block(1, 'text'), stop(1), ...end]), ['3:messages/blocks']);
    assert.deepEqual(violations([start, block(0, 'text'), delta(0, 'input_json_delta'), stop(0), ...end]), ['3:messages/blocks']);
    assert.deepEqual(violations([start, block(0, 'text'), stop(0), delta(0, 'text_delta'), ...end]), ['4:messages/blocks']);
    assert.deepEqual(violations([start, block(0, 'text'), ...end]), ['3:messages/blocks']);
  });

  it('ends at message_stop after the stop_reason, or at an error event', () => {
    assert.deepEqual(violations([start, block(0, 'text'), stop(0)]), ['end:messages/terminal']);
    assert.deepEqual(violations([start, ev({ type: 'message_stop' })]), ['2:messages/terminal']);
    assert.deepEqual(violations([start, ...end, block(0, 'text')]), ['4:messages/terminal']);
    const error = ev({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    assert.deepEqual(violations([start, block(0, 'text'), error]), []);
    assert.deepEqual(violations([start, error, block(0, 'text')]), ['3:messages/terminal']);
  });
});

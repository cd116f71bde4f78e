import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalizeRelayedFrame } from './relay-grammar.ts';

describe('normalizeRelayedFrame', () => {
  it('passes a well-formed frame on as the same object (no parse, no rewrite)', () => {
    const frame = { event: 'response.output_text.delta', data: '{"type":"response.output_text.delta","sequence_number":4,"delta":"Hi"}' };
    assert.equal(normalizeRelayedFrame(frame, 4), frame);
  });

  it('passes on a frame numbered last, as newer OpenAI models write it', () => {
    const frame = { event: 'response.output_text.delta', data: '{"type":"response.output_text.delta","delta":"Hi","sequence_number":4}' };
    assert.equal(normalizeRelayedFrame(frame, 4), frame);
  });

  it('adds the event line and the sequence number an older upstream left out, the rest byte for byte', () => {
    const frame = { data: '{"type":"response.created","response":{"id":"resp_1","temperature":1.0}}' };
    assert.deepEqual(normalizeRelayedFrame(frame, 0), {
      event: 'response.created',
      data: '{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","temperature":1.0}}',
    });
  });

  it('numbers a payload written in another key order or spacing by writing it again', () => {
    const got = normalizeRelayedFrame({ data: '{ "delta": "Hi", "type": "response.output_text.delta" }' }, 5);
    assert.deepEqual(got, {
      event: 'response.output_text.delta',
      data: '{"type":"response.output_text.delta","sequence_number":5,"delta":"Hi"}',
    });
  });

  it('renumbers a frame whose sequence_number does not follow the one before', () => {
    const got = normalizeRelayedFrame({ event: 'response.completed', data: '{"type":"response.completed","sequence_number":9}' }, 3);
    assert.deepEqual(got, { event: 'response.completed', data: '{"type":"response.completed","sequence_number":3}' });
  });

  it("makes the event line equal to the payload's type, keeping the payload when its number is right", () => {
    const data = '{"sequence_number":2,"type":"response.output_text.done","text":"Hi"}';
    assert.deepEqual(normalizeRelayedFrame({ event: 'message', data }, 2), { event: 'response.output_text.done', data });
  });

  it('relays what it cannot name as it came: not JSON, not an object, no string type', () => {
    for (const frame of [{ data: 'not json' }, { data: '[1,2]' }, { event: 'x', data: '{"type":7}' }, { data: 'null' }]) {
      assert.equal(normalizeRelayedFrame(frame, 0), frame);
    }
  });

  it('numbers a stream of frames from 0 by one', () => {
    const frames = ['response.created', 'response.in_progress', 'response.completed'].map((type) => ({
      data: JSON.stringify({ type }),
    }));
    const numbers = frames.map((f, i) => JSON.parse(normalizeRelayedFrame(f, i).data).sequence_number);
    assert.deepEqual(numbers, [0, 1, 2]);
  });

  it('reads a number that only starts like the right one as another number', () => {
    const got = normalizeRelayedFrame({ event: 'response.completed', data: '{"type":"response.completed","sequence_number":12}' }, 1);
    assert.deepEqual(got, { event: 'response.completed', data: '{"type":"response.completed","sequence_number":1}' });
  });

  it('parses a type whose JSON escapes a quote instead of taking the event line as it', () => {
    const data = '{"type":"a\\"b","sequence_number":0}';
    assert.deepEqual(normalizeRelayedFrame({ event: 'a\\"b', data }, 0), { event: 'a"b', data });
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RelayOutput } from './relay-output.ts';

const named = (type: string, fields: Record<string, unknown>) => ({ event: type, data: JSON.stringify({ type, ...fields }) });

describe('RelayOutput', () => {
  it('prices the deltas of an upstream that omits event lines and writes type after other fields', () => {
    const output = new RelayOutput();
    const frames = [
      { event: undefined, data: '{ "output_index": 0, "content_index": 0, "delta": "Hé", "type": "response.output_text.delta" }' },
      { event: undefined, data: '{"sequence_number":1,"type":"response.function_call_arguments.delta","delta":"{}"}' },
    ];
    assert.equal(output.measure(frames), Buffer.byteLength('Hé') + 2);
  });

  it("keeps a refused read's lifecycle start, named or not", () => {
    const output = new RelayOutput();
    const created = { event: undefined, data: '{ "response": {}, "type": "response.created" }' };
    const inProgress = named('response.in_progress', { response: {} });
    output.measure([created, inProgress, named('response.output_text.delta', { delta: 'x' })]);
    assert.deepEqual(output.refusedStart, [created, inProgress]);
  });

  it('follows an item from its start to its deltas, and closes what a stop left open as incomplete', () => {
    const output = new RelayOutput();
    const item = { id: 'msg_1', type: 'message', status: 'in_progress', content: [] };
    assert.equal(output.follow('response.output_item.added', named('response.output_item.added', { output_index: 0, item })), undefined);
    const part = { type: 'output_text', text: '', annotations: [] };
    output.follow('response.content_part.added', named('response.content_part.added', { output_index: 0, content_index: 0, part }));
    const delta = named('response.output_text.delta', { output_index: 0, content_index: 0, delta: 'Hi' });
    assert.deepEqual(output.follow('response.output_text.delta', delta), { type: 'text', choice: 0, text: 'Hi' });
    const events: string[] = [];
    const { output: listed } = output.close((type) => {
      events.push(type);
      return '';
    });
    assert.deepEqual(events, ['response.output_text.done', 'response.content_part.done', 'response.output_item.done']);
    assert.deepEqual(listed, [{ ...item, status: 'incomplete', content: [{ ...part, text: 'Hi', annotations: [] }] }]);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFixture } from './fixtures.ts';
import { checkResponsesStream, GrammarError } from './responses-grammar.ts';
import { relayBodies, responsesRecordings } from './responses-recordings.ts';

type Event = Record<string, unknown> & { type: string };

const msg = { type: 'message', id: 'msg_1', role: 'assistant' };
const part = (text: string) => ({ type: 'output_text', text, annotations: [] });
const call = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f' };
const at = (i: number) => ({ item_id: i === 0 ? 'msg_1' : 'fc_1', output_index: i });
const doneMessage = { ...msg, status: 'completed', content: [part('Hi!')] };
const doneCall = { ...call, arguments: '{"a":1}', status: 'completed' };
const usage = { input_tokens: 3, output_tokens: 2, total_tokens: 5 };
const resp = (status: string, output: unknown[]) => ({ id: 'resp_1', status, output, usage, error: null, incomplete_details: null });

/** A valid stream: a message with two deltas, then a function call with its arguments. */
function valid(): Event[] {
  return [
    { type: 'response.created', response: resp('in_progress', []) },
    { type: 'response.in_progress', response: resp('in_progress', []) },
    { type: 'response.output_item.added', output_index: 0, item: { ...msg, status: 'in_progress', content: [] } },
    { type: 'response.content_part.added', ...at(0), content_index: 0, part: part('') },
    { type: 'response.output_text.delta', ...at(0), content_index: 0, delta: 'Hi' },
    { type: 'response.output_text.delta', ...at(0), content_index: 0, delta: '!' },
    { type: 'response.output_text.done', ...at(0), content_index: 0, text: 'Hi!' },
    { type: 'response.content_part.done', ...at(0), content_index: 0, part: part('Hi!') },
    { type: 'response.output_item.done', output_index: 0, item: doneMessage },
    { type: 'response.output_item.added', output_index: 1, item: { ...call, arguments: '', status: 'in_progress' } },
    { type: 'response.function_call_arguments.delta', ...at(1), delta: '{"a":1}' },
    { type: 'response.function_call_arguments.done', ...at(1), call_id: 'call_1', name: 'f', arguments: '{"a":1}' },
    { type: 'response.output_item.done', output_index: 1, item: doneCall },
    { type: 'response.completed', response: resp('completed', [doneMessage, doneCall]) },
  ];
}

/** SSE frames with `event:` lines and sequence numbers, then `[DONE]`. */
function wire(events: Event[]): string {
  return `${events.map((e, i) => `event: ${e.type}\ndata: ${JSON.stringify({ sequence_number: i, ...e })}\n\n`).join('')}data: [DONE]\n\n`;
}

function rejects(body: string, rule: RegExp) {
  assert.throws(
    () => checkResponsesStream(body),
    (err: unknown) => err instanceof GrammarError && rule.test(err.message),
  );
}

const replace = (i: number, e: Event) => valid().map((x, j) => (j === i ? e : x));
const without = (...indexes: number[]) => valid().filter((_, j) => !indexes.includes(j));

describe('checkResponsesStream', () => {
  it('accepts a valid stream (heartbeat comments between frames too) and returns its events and terminal', () => {
    const body = wire(valid()).replace('\n\nevent: response.in_progress', '\n\n: heartbeat\n\nevent: response.in_progress');
    const checked = checkResponsesStream(body);
    assert.deepEqual(
      checked.events.map((e) => e.type),
      valid().map((e) => e.type),
    );
    assert.deepEqual(checked.terminal.response.output, [doneMessage, doneCall]);
    assert.deepEqual(checked.comments, ['heartbeat']);
  });

  it('accepts every recorded Responses stream as relayed (upstream mode)', () => {
    for (const name of responsesRecordings) {
      for (const body of relayBodies(name)) {
        assert.doesNotThrow(() => checkResponsesStream(`${body}data: [DONE]\n\n`, { upstream: true }), name);
      }
    }
    // The same recordings break the stricter rules sluice's own streams follow.
    rejects(`${readFixture('openai-responses/function-call.sse')}data: [DONE]\n\n`, /sequence_number undefined, expected 0/);
  });

  it('rejects an `event:` line that is not the data type', () => {
    rejects(wire(valid()).replace('event: response.output_text.done', 'event: response.output_text.delta'), /event 6 .*is response.output_text.done/);
  });

  it('rejects a gap in sequence_number', () => {
    const body = wire(valid()).replace('"sequence_number":5,', '"sequence_number":6,');
    rejects(body, /event 5 .*sequence_number 6, expected 5/);
  });

  it('rejects a stream that does not open with response.created then response.in_progress', () => {
    rejects(wire(without(1)), /event 1 .*second event must be response.in_progress/);
  });

  it('rejects an output item that is never done', () => {
    rejects(wire(without(12).map((e) => (e.type === 'response.completed' ? { ...e, response: resp('completed', [doneMessage]) } : e))), /still open/);
  });

  it('rejects a content part that is still open when its item is done', () => {
    rejects(wire(without(7)), /event 7 .*part of the item is still open/);
  });

  it('rejects a delta outside its open part', () => {
    const events = valid();
    events.splice(8, 0, { type: 'response.output_text.delta', ...at(0), content_index: 0, delta: 'late' });
    rejects(wire(events), /event 8 .*no open content part 0/);
  });

  it('checks citations: annotation_index in order, inside the open output_text part, and held by the part when it is done', () => {
    const cite = { type: 'url_citation', start_index: 0, end_index: 2, url: 'https://a.example', title: 'A' };
    const added = (index: number) => ({
      type: 'response.output_text.annotation.added',
      ...at(0),
      content_index: 0,
      annotation_index: index,
      annotation: cite,
    });
    const withCitations = (indexes: number[], donePart = { ...part('Hi!'), annotations: indexes.map(() => cite) }) => {
      const events = replace(7, { type: 'response.content_part.done', ...at(0), content_index: 0, part: donePart });
      events.splice(5, 0, ...indexes.map(added));
      return events;
    };
    assert.equal(checkResponsesStream(wire(withCitations([0, 1]))).events[6].type, 'response.output_text.annotation.added');
    rejects(wire(withCitations([0, 2])), /event 6 .*annotation_index 2, expected 1/);
    rejects(wire(withCitations([0], part('Hi!'))), /does not hold the annotations added to it/);
    const late = valid();
    late.splice(8, 0, added(0));
    rejects(wire(late), /event 8 .*no open content part 0/);
  });

  it('rejects a delta for an item that is already done', () => {
    const events = valid();
    events.splice(13, 0, { type: 'response.function_call_arguments.delta', ...at(1), delta: 'x' });
    rejects(wire(events), /event 13 .*output item 1 is already done/);
  });

  it('rejects output_text.done whose text is not the deltas', () => {
    rejects(wire(replace(6, { type: 'response.output_text.done', ...at(0), content_index: 0, text: 'Hi' })), /event 6 .*not the deltas/);
  });

  it('rejects function_call_arguments.done whose arguments are not the deltas, or without call_id and name', () => {
    const args = (fields: Record<string, unknown>) => replace(11, { type: 'response.function_call_arguments.done', ...at(1), ...fields });
    rejects(wire(args({ call_id: 'call_1', name: 'f', arguments: '{}' })), /event 11 .*arguments "\{\}" are not the deltas/);
    rejects(wire(args({ arguments: '{"a":1}' })), /event 11 .*call_id\/name undefined\/undefined/);
  });

  it('rejects a function call closed without function_call_arguments.done', () => {
    rejects(wire(without(11)), /event 11 .*without function_call_arguments.done/);
  });

  it('rejects two terminal events, and an event after the terminal one', () => {
    rejects(wire([...valid(), { type: 'response.failed', response: resp('failed', []) }]), /event 14 .*after response.completed/);
  });

  it('rejects a stream without a terminal event', () => {
    rejects(wire(valid().slice(0, -1)), /no terminal event/);
  });

  it('rejects a stream that does not end with [DONE], or has [DONE] before the end', () => {
    rejects(wire(valid()).replace('data: [DONE]\n\n', ''), /does not end with `data: \[DONE\]`/);
    rejects(wire(valid()).replace('event: response.in_progress', 'data: [DONE]\n\nevent: response.in_progress'), /\[DONE\] before the end/);
  });

  it('rejects a terminal response whose output is not the items of the stream', () => {
    const wrong = { ...doneMessage, content: [part('Hello')] };
    rejects(wire(replace(13, { type: 'response.completed', response: resp('completed', [wrong, doneCall]) })), /not the items of the stream/);
  });

  it('rejects a done item whose content is not what its parts built', () => {
    rejects(
      wire(replace(8, { type: 'response.output_item.done', output_index: 0, item: { ...doneMessage, content: [] } })),
      /content is not its parts/,
    );
  });

  it('rejects an error event not followed by response.failed, and a failed response without an error', () => {
    const error = { type: 'error', error: { code: 'x', message: 'y' } };
    rejects(wire([...valid().slice(0, -1), error, valid().at(-1) as Event]), /error event not followed by response.failed/);
    rejects(
      wire([...valid().slice(0, -1), { type: 'response.failed', response: resp('failed', [doneMessage, doneCall]) }]),
      /no error code and message/,
    );
  });

  it('rejects output indexes that skip', () => {
    rejects(wire(replace(2, { type: 'response.output_item.added', output_index: 1, item: { ...msg, content: [] } })), /output_index 1, expected 0/);
  });
});

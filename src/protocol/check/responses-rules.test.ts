import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ev, named, responsesBody, responsesEvents, responsesTerminal, violations } from '../../../test/helpers/check-streams.ts';

const events = responsesEvents;

describe('Responses rules', () => {
  it('a conforming stream has no violation', () => {
    assert.deepEqual(violations(responsesBody(events())), []);
  });

  it('sequence_number starts at 0 and grows by one', () => {
    const e = events();
    e[4].sequence_number = 5;
    assert.deepEqual(violations(responsesBody(e)), ['5:responses/sequence', '6:responses/sequence']);
    const gap = events().map((x, i) => ({ ...x, sequence_number: i < 4 ? i : i + 1 }));
    assert.deepEqual(violations(responsesBody(gap)), ['5:responses/sequence']);
    const missing = events().map((x) => ({ ...x, sequence_number: undefined }));
    assert.deepEqual(violations(responsesBody(missing)), ['1:responses/sequence']);
  });

  it('the first event is response.created, and the type matches the event name', () => {
    assert.deepEqual(violations(responsesBody(events().slice(1))), ['1:responses/created-first']);
    const body = responsesBody(events()).replace('event: response.output_text.delta', 'event: response.text.delta');
    assert.deepEqual(violations(body), ['5:responses/event-type']);
  });

  it('every added closed by its done, before the terminal event', () => {
    const e = events();
    e.splice(6, 1); // content_part.done
    assert.deepEqual(violations(responsesBody(e)), ['7:responses/added-done']);
    const twice = events();
    twice.splice(8, 0, twice[7]);
    assert.deepEqual(violations(responsesBody(twice)), ['9:responses/added-done']);
    const neverAdded = events();
    neverAdded.splice(2, 1);
    assert.deepEqual(violations(responsesBody(neverAdded)), ['3:responses/added-done', '7:responses/added-done']);
  });

  it('a delta for an item that is not open', () => {
    const e = events();
    e.splice(8, 0, ev('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta: '!' }));
    assert.deepEqual(violations(responsesBody(e)), ['9:responses/added-done']);
  });

  it('exactly one terminal event, with its status, and nothing after it', () => {
    assert.deepEqual(violations(responsesBody(events().slice(0, -1))), ['end:responses/terminal']);
    assert.deepEqual(violations(responsesBody([...events(), responsesTerminal('failed')])), ['10:responses/terminal']);
    const wrong = events();
    wrong[8] = ev('response.completed', { response: { id: 'resp_1', status: 'failed' } });
    assert.deepEqual(violations(responsesBody(wrong)), ['9:responses/terminal']);
  });

  it('a failure: error, then response.failed, then [DONE]', () => {
    const failed = [...events().slice(0, 2), ev('error', { error: { message: 'quota' } }), responsesTerminal('failed')];
    assert.deepEqual(violations(responsesBody(failed)), []);
    const alone = [...events().slice(0, 2), ev('error', { error: { message: 'quota' } })];
    assert.deepEqual(violations(responsesBody(alone)), ['3:responses/terminal']);
  });

  it('one response id', () => {
    const e = events();
    e[8] = ev('response.completed', { response: { id: 'resp_2', status: 'completed' } });
    assert.deepEqual(violations(responsesBody(e)), ['9:responses/stable-id']);
  });

  it('an `event:` line is optional; a stream of only data frames is still read as Responses', () => {
    const body = responsesBody(events()).replace(/^event: .*\n/gm, '');
    assert.deepEqual(violations(body), []);
    assert.match(named('x', {}), /^event: x/);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { referencedIds, returnedIds } from './stored-ids.ts';

describe('referencedIds', () => {
  it('names previous_response_id, the conversation (either form) and every input item id, with where each is', () => {
    assert.deepEqual(
      referencedIds({
        previous_response_id: 'resp_1',
        conversation: { id: 'conv_1' },
        input: [
          { role: 'user', content: 'hi' },
          { type: 'item_reference', id: 'msg_1' },
          { type: 'reasoning', id: 'rs_1', summary: [] },
        ],
      }),
      [
        { id: 'resp_1', kind: 'response', param: 'previous_response_id' },
        { id: 'conv_1', kind: 'conversation', param: 'conversation.id' },
        { id: 'msg_1', kind: 'item', param: 'input[1].id' },
        { id: 'rs_1', kind: 'item', param: 'input[2].id' },
      ],
    );
    assert.deepEqual(referencedIds({ conversation: 'conv_2', input: 'hi' }), [{ id: 'conv_2', kind: 'conversation', param: 'conversation' }]);
  });

  it('ignores what names nothing stored: null, empty or non-string ids, a string input', () => {
    assert.deepEqual(referencedIds({ previous_response_id: null, conversation: '', input: 'hi' }), []);
    assert.deepEqual(referencedIds({ previous_response_id: 7, conversation: { id: 3 }, input: [{ id: null }, 'x', null] }), []);
  });
});

describe('returnedIds', () => {
  it("hands out the response's id, its conversation's and its output items'", () => {
    assert.deepEqual(
      returnedIds({
        id: 'resp_1',
        conversation: { id: 'conv_1' },
        output: [{ id: 'rs_1', type: 'reasoning' }, { type: 'message' }, { id: 'msg_1', type: 'message' }],
      }),
      ['resp_1', 'conv_1', 'rs_1', 'msg_1'],
    );
    assert.deepEqual(returnedIds({ id: 'resp_2', conversation: null, output: null }), ['resp_2']);
  });
});

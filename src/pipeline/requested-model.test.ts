import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { requestedModelOf } from './requested-model.ts';

describe('requestedModelOf', () => {
  it("reads the body's model before the body is parsed", () => {
    assert.equal(requestedModelOf({ model: 'mock/echo', messages: 'not an array' }), 'mock/echo');
  });

  it('gives no model for a body without a string model', () => {
    for (const body of [null, undefined, 'mock/echo', ['mock/echo'], {}, { model: 42 }, { model: { name: 'x' } }]) {
      assert.equal(requestedModelOf(body), '', JSON.stringify(body));
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findTooDeep } from './json-depth.ts';

const nestedArrays = (depth: number): unknown => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`);

describe('findTooDeep', () => {
  it('accepts ordinary bodies and scalars', () => {
    assert.equal(findTooDeep({ model: 'x', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] }), null);
    assert.equal(findTooDeep('text'), null);
    assert.equal(findTooDeep(null), null);
    assert.equal(findTooDeep(nestedArrays(10), 10), null);
  });

  it('names the path of the first value past the limit', () => {
    assert.equal(findTooDeep({ model: 'x', extra: nestedArrays(5) }, 4), 'extra[0][0][0]');
    assert.equal(findTooDeep({ a: { b: { c: { d: {} } } } }, 3), 'a.b.c');
  });

  it('a body that is itself too deep is named as the body', () => {
    assert.equal(findTooDeep(nestedArrays(3), 0), '(body)');
  });

  it('walks 100k levels without overflowing the stack', () => {
    assert.equal(findTooDeep(nestedArrays(100_000)), `${'[0]'.repeat(128)}`);
  });
});

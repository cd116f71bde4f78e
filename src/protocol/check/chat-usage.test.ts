import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { choice, chunk, DONE, errorFrame, finish, role, text, usage, violations } from '../../../test/helpers/check-streams.ts';

const u = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };

describe('chat usage', () => {
  it('usage on the finish chunk itself, as the reference shows it, or on its own chunk after', () => {
    assert.deepEqual(violations([role(), text('a'), chunk([choice({}, 'stop')], { usage: u }), DONE]), []);
    assert.deepEqual(violations([role(), text('a'), chunk([choice({ content: 'b' }, 'stop')], { usage: u }), DONE]), []);
    assert.deepEqual(violations([role(), text('a'), finish(), usage(), DONE]), []);
  });

  it('"usage": null on every chunk is no usage', () => {
    const withNull = (f: string) => f.replace('"choices"', '"usage":null,"choices"');
    assert.deepEqual(violations([withNull(role()), withNull(text('a')), withNull(finish()), usage(), DONE]), []);
  });

  it('usage before the finish, or on a chunk whose choice goes on', () => {
    assert.deepEqual(violations([role(), text('a'), usage(), finish(), DONE]), ['4:chat/usage-after-finish']);
    assert.deepEqual(violations([role(), chunk([choice({ content: 'a' })], { usage: u }), finish(), DONE]), [
      '2:chat/usage-after-finish',
      '3:chat/usage-after-finish',
    ]);
  });

  it('usage once', () => {
    assert.deepEqual(violations([role(), finish(), usage(), usage(), DONE]), ['4:chat/usage-after-finish']);
  });

  it('a failed stream: usage so far, then the error frame', () => {
    assert.deepEqual(violations([role(), text('a'), usage(), errorFrame, DONE]), []);
  });
});

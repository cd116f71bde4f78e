import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chatStream, choice, chunk, DONE, errorFrame, finish, role, text, usage, violations } from '../../../test/helpers/check-streams.ts';

describe('chat choices', () => {
  it('a conforming stream has no violation', () => {
    assert.deepEqual(violations(chatStream()), []);
  });

  it('role first: the first delta of each choice, and only it', () => {
    assert.deepEqual(violations([text('Hi'), finish(), DONE]), ['1:chat/role-first']);
    assert.deepEqual(violations([role(), chunk([choice({ role: 'assistant', content: 'a' })]), role(), finish(), DONE]), ['2:chat/role-first']);
  });

  it('n > 1: every choice starts with its role and finishes once', () => {
    assert.deepEqual(violations([role(0), role(1), text('a', 1), text('b', 0), finish('stop', 1), finish('stop', 0), DONE]), []);
    assert.deepEqual(violations([role(0), role(1), finish('stop', 0), DONE]), ['end:chat/finish-once']);
  });

  it('exactly one finish per choice, and nothing of that choice after it', () => {
    assert.deepEqual(violations([role(), text('a'), finish(), finish(), DONE]), ['4:chat/finish-once']);
    assert.deepEqual(violations([role(), finish(), text('late'), DONE]), ['3:chat/after-finish']);
    assert.deepEqual(violations([role(), text('a'), DONE]), ['end:chat/finish-once']);
  });

  it('a failed stream may leave its choice unfinished', () => {
    assert.deepEqual(violations([role(), text('a'), errorFrame, DONE]), []);
  });

  it('one stable id', () => {
    assert.deepEqual(violations([role(), text('a'), chunk([choice({ content: 'b' })], { id: 'chatcmpl-2' }), finish(), usage(), DONE]), [
      '3:chat/stable-id',
    ]);
    assert.deepEqual(violations([role(), chunk([choice({}, 'stop')], { id: undefined }), DONE]), ['2:chat/stable-id']);
  });

  it('a choice without a whole-number index', () => {
    assert.deepEqual(violations([role(), chunk([{ delta: { content: 'a' }, finish_reason: null }]), finish(), DONE]), ['2:chat/frame-kind']);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errors } from '../errors/catalog.ts';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import { storableAnswer } from './storable-answer.ts';

const usage: CanonicalEvent = { type: 'usage', usage: { inputTokens: 3, outputTokens: 2, source: 'provider' } };
const answer: CanonicalEvent[] = [
  { type: 'start' },
  { type: 'text', choice: 0, text: 'Hello' },
  { type: 'finish', choice: 0, reason: 'stop' },
  usage,
  { type: 'end' },
];

describe('storableAnswer', () => {
  it('keeps a complete answer as it came', () => {
    assert.deepEqual(storableAnswer(answer, false), answer);
  });

  it('leaves out a fallback before the answer', () => {
    const fallback: CanonicalEvent = { type: 'fallback', from: { provider: 'a', model: 'm' }, to: { provider: 'b', model: 'm' }, reason: 'x' };
    assert.deepEqual(storableAnswer([fallback, ...answer], false), answer);
  });

  it('refuses an answer with an error', () => {
    assert.equal(storableAnswer([...answer.slice(0, 2), { type: 'error', error: errors.truncated('up') }], false), undefined);
  });

  it('refuses an answer cut before its finish', () => {
    assert.equal(storableAnswer(answer.slice(0, 2), false), undefined);
  });

  it('refuses an answer of two choices with only one finished', () => {
    const two: CanonicalEvent[] = [...answer.slice(0, 3), { type: 'text', choice: 1, text: 'Hi' }, usage];
    assert.equal(storableAnswer(two, false), undefined);
  });

  it('keeps a `length` finish only when told to', () => {
    const cut: CanonicalEvent[] = [answer[1], { type: 'finish', choice: 0, reason: 'length' }];
    assert.equal(storableAnswer(cut, false), undefined);
    assert.deepEqual(storableAnswer(cut, true), cut);
  });
});

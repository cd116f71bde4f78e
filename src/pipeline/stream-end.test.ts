import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errors } from '../errors/catalog.ts';
import { type StreamEndState, streamEnd } from './stream-end.ts';

const base: StreamEndState = { failure: null, finishedEarly: false, writerEnded: false, committed: true, held: false };
const failed = errors.truncated('up');

describe('streamEnd', () => {
  it('a normal end sends the closing frames and [DONE], committed or not', () => {
    assert.equal(streamEnd(base), 'finish');
    assert.equal(streamEnd({ ...base, committed: false }), 'finish');
    assert.equal(streamEnd({ ...base, held: true }), 'finish');
  });

  it('a stream finished at the upstream end marker needs nothing more, even if the upstream failed afterwards', () => {
    assert.equal(streamEnd({ ...base, finishedEarly: true }), 'done');
    assert.equal(streamEnd({ ...base, finishedEarly: true, failure: failed }), 'done');
  });

  it('a failure before any byte is an HTTP error (the SDKs retry those)', () => {
    assert.equal(streamEnd({ ...base, failure: failed, committed: false }), 'http-error');
  });

  it('a failure before any byte is an error frame when the profile tells failures in the stream (the accounting reference)', () => {
    assert.equal(streamEnd({ ...base, failure: failed, committed: false, inStream: true }), 'fail');
    assert.equal(streamEnd({ ...base, failure: errors.cancelled('gone'), writerEnded: true, committed: false, inStream: true }), 'done');
  });

  it('a failure after the headers, or with frames held back, is an error frame then [DONE]', () => {
    assert.equal(streamEnd({ ...base, failure: failed }), 'fail');
    assert.equal(streamEnd({ ...base, failure: failed, committed: false, held: true }), 'fail');
  });

  it('a failure when the client is gone writes nothing', () => {
    assert.equal(streamEnd({ ...base, failure: errors.cancelled('gone'), writerEnded: true }), 'done');
    assert.equal(streamEnd({ ...base, failure: errors.cancelled('gone'), writerEnded: true, committed: false }), 'done');
  });
});

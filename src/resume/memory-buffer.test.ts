import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryStreamBuffer } from './memory-buffer.ts';
import type { KeptStream, StreamLookup } from './stream-buffer.ts';
import { framesFrom } from './stream-buffer.ts';

const frame = (id: number) => `id: ${id}\ndata: {"n":${id}}\n\n`;
const frames = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => frame(from + i)).join('');

function kept(lookup: StreamLookup): KeptStream {
  assert.equal(lookup.state, 'kept');
  return lookup.stream;
}

/** Everything a resume after `afterId` receives, and whether it was told the stream is over. */
function resume(stream: KeptStream, afterId: number) {
  const got = { text: '', done: false };
  const stop = stream.follow(
    afterId,
    (text) => (got.text += text),
    () => (got.done = true),
  );
  return { got, stop };
}

const LIMITS = { streams: 10, bytes: 1_000_000, ttlMs: 60_000 };

describe('framesFrom', () => {
  it('cuts a write at the frame with the id asked for, skipping comments before it', () => {
    const text = `${frame(4)}: note\n\n${frame(5)}${frame(6)}`;
    assert.equal(framesFrom(text, 4, 4), text);
    assert.equal(framesFrom(text, 4, 5), frames(5, 6));
    assert.equal(framesFrom(text, 4, 6), frame(6));
    assert.equal(framesFrom(text, 4, 7), '');
  });
});

describe('MemoryStreamBuffer', () => {
  it('replays the frames after an id, across writes of several frames, and ends with the stream', async () => {
    const buffer = new MemoryStreamBuffer(LIMITS);
    const rec = buffer.recording('r1');
    rec.claim('p1');
    rec.start('text/event-stream');
    rec.record(frames(1, 3), 3);
    rec.record(frames(4, 7), 7);
    const lookup = await buffer.find('r1');
    assert.equal(lookup.state === 'kept' && lookup.projectId, 'p1');
    const stream = kept(lookup);
    assert.equal(stream.contentType, 'text/event-stream');
    assert.equal(stream.lastId, 7);
    const { got } = resume(stream, 2);
    assert.equal(got.text, frames(3, 7));
    assert.equal(got.done, false);
    rec.record(frames(8, 9), 9);
    rec.end();
    assert.equal(got.text, frames(3, 9));
    assert.equal(got.done, true);
    assert.deepEqual(resume(stream, 0).got, { text: frames(1, 9), done: true });
    assert.deepEqual(resume(stream, 9).got, { text: '', done: true });
  });

  it('a follower that stops receives nothing more', async () => {
    const buffer = new MemoryStreamBuffer(LIMITS);
    const rec = buffer.recording('r1');
    rec.start('text/event-stream');
    rec.record(frames(1, 2), 2);
    const { got, stop } = resume(kept(await buffer.find('r1')), 1);
    stop();
    rec.record(frames(3, 3), 3);
    assert.equal(got.text, frame(2));
  });

  it('keeps nothing before the headers went out, and knows nothing of an id it never had', async () => {
    const buffer = new MemoryStreamBuffer(LIMITS);
    buffer.recording('r1').claim('p1');
    assert.deepEqual(await buffer.find('r1'), { state: 'unknown' });
  });

  it('drops the oldest stream past the count bound and answers gone for it, with its project', async () => {
    const buffer = new MemoryStreamBuffer({ ...LIMITS, streams: 2 });
    for (const id of ['a', 'b', 'c']) {
      const rec = buffer.recording(id);
      rec.claim(`p-${id}`);
      rec.start('text/event-stream');
      rec.record(frames(1, 1), 1);
    }
    const a = await buffer.find('a');
    assert.equal(a.state, 'gone');
    assert.equal(a.state === 'gone' && a.projectId, 'p-a');
    assert.match(a.state === 'gone' ? a.why : '', /more than 2 streams/);
    assert.equal((await buffer.find('c')).state, 'kept');
    assert.equal(buffer.size.streams, 2);
  });

  it('drops the oldest streams past the byte bound, ending their live resumes; a stream larger than the bound is not kept', async () => {
    const size = frames(1, 1).length;
    const buffer = new MemoryStreamBuffer({ ...LIMITS, bytes: size * 3 });
    const a = buffer.recording('a');
    a.start('text/event-stream');
    a.record(frames(1, 2), 2);
    const { got } = resume(kept(await buffer.find('a')), 0);
    const b = buffer.recording('b');
    b.start('text/event-stream');
    b.record(frames(1, 2), 2);
    assert.equal(got.done, true, 'the live resume of the dropped stream ends');
    assert.equal((await buffer.find('a')).state, 'gone');
    assert.equal(buffer.size.bytes, size * 2);
    b.record(frames(3, 4), 4);
    const lookup = await buffer.find('b');
    assert.match(lookup.state === 'gone' ? lookup.why : '', /outgrew/);
    assert.deepEqual(buffer.size, { streams: 0, bytes: 0 });
    // A dropped stream's later writes go nowhere.
    b.record(frames(5, 5), 5);
    assert.deepEqual(buffer.size, { streams: 0, bytes: 0 });
  });

  it('forgets a stream ttl after its last frame: gone, then its memory is free', async () => {
    let now = 1_000;
    const buffer = new MemoryStreamBuffer({ ...LIMITS, ttlMs: 100 }, () => now);
    const rec = buffer.recording('r1');
    rec.start('text/event-stream');
    rec.record(frames(1, 1), 1);
    rec.end();
    now += 100;
    assert.equal((await buffer.find('r1')).state, 'kept');
    now += 1;
    const lookup = await buffer.find('r1');
    assert.match(lookup.state === 'gone' ? lookup.why : '', /ttl_s/);
    assert.deepEqual(buffer.size, { streams: 0, bytes: 0 });
  });

  it('remembers as many gone streams as it keeps streams', async () => {
    const buffer = new MemoryStreamBuffer({ ...LIMITS, streams: 1 });
    for (const id of ['a', 'b', 'c']) {
      const rec = buffer.recording(id);
      rec.start('text/event-stream');
    }
    assert.equal((await buffer.find('a')).state, 'unknown');
    assert.equal((await buffer.find('b')).state, 'gone');
    assert.equal((await buffer.find('c')).state, 'kept');
  });
});

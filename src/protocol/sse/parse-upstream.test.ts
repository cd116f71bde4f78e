import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSseFramer, type SseFrame } from './parse-upstream.ts';

function frame(reads: (string | Uint8Array)[], maxBufferSize?: number): string[] {
  const seen: string[] = [];
  const framer = createSseFramer({
    maxBufferSize,
    onFrame: (f) => seen.push(`frame ${f.data}`),
    onInvalid: (detail) => seen.push(`invalid ${detail}`),
  });
  for (const read of reads) framer.push(typeof read === 'string' ? new TextEncoder().encode(read) : read);
  framer.end();
  return seen;
}

const oneByteReads = (text: string) => [...new TextEncoder().encode(text)].map((b) => new Uint8Array([b]));

describe('upstream SSE framer', () => {
  it('regression: a line that is not SSE fails the stream however the reads cut it (it was dropped without a word when a read ended inside it)', () => {
    const body = 'data: {"a":1}\n"bogus line\ndata: {"b":2}\n\ndata: {"c":3}\n\n';
    assert.deepEqual(frame([body]), ['invalid line is not server-sent events: "bogus line']);
    assert.deepEqual(frame(oneByteReads(body)), ['invalid line is not server-sent events: "…']);
    assert.deepEqual(frame(['data: {"a":1}\n\n<ht', 'ml><body>502</body></html>\n']), [
      'frame {"a":1}',
      'invalid line is not server-sent events: <ht…',
    ]);
  });

  it('fields, comments and CRLF framing cut at every byte are still read', () => {
    const body = ': ping\r\nevent: message_start\r\ndata: {"x":1}\r\n\r\nid: 7\nretry: 10\ndata: [DONE]\n\n';
    assert.deepEqual(frame(oneByteReads(body)), ['frame {"x":1}', 'frame [DONE]']);
    assert.deepEqual(frame([body]), ['frame {"x":1}', 'frame [DONE]']);
  });

  it('regression: end() after the last read filled the buffer does not throw (the parser refuses input after an overflow)', () => {
    assert.deepEqual(frame(['data: abcd', new Uint8Array([0xc3])], 10), ['invalid Buffered data exceeded max buffer size of 10 characters']);
  });
});

/** Every frame (event name and data) and every invalid report, for these reads. */
function frames(reads: Uint8Array[], maxBufferSize?: number): (SseFrame | string)[] {
  const seen: (SseFrame | string)[] = [];
  const framer = createSseFramer({ maxBufferSize, onFrame: (f) => seen.push(f), onInvalid: (detail) => seen.push(`invalid ${detail}`) });
  for (const read of reads) framer.push(read);
  framer.end();
  return seen;
}

const bytes = (text: string) => new TextEncoder().encode(text);
const ENDINGS = { LF: '\n', CRLF: '\r\n', CR: '\r' };
/** Two frames (a named one, then [DONE]) with a comment, a multi-line data and an id, written with `eol`. */
const body = (eol: string) =>
  [': keep-alive', 'event: content_block_delta', 'id: 7', 'data: {"a":1}', 'data:{"b":2}', '', 'data: [DONE]', '', ''].join(eol);
const expected: SseFrame[] = [
  { event: 'content_block_delta', data: '{"a":1}\n{"b":2}' },
  { event: undefined, data: '[DONE]' },
];

describe('upstream SSE framer: what the module promises', () => {
  for (const [name, eol] of Object.entries(ENDINGS)) {
    it(`${name} line endings: the same frames, however two reads cut them, and in one-byte reads`, () => {
      const whole = bytes(body(eol));
      assert.deepEqual(frames([whole]), expected);
      for (let at = 0; at <= whole.length; at++) {
        assert.deepEqual(frames([whole.subarray(0, at), whole.subarray(at)]), expected, `cut at ${at}`);
      }
      assert.deepEqual(frames([...whole].map((b) => new Uint8Array([b]))), expected);
    });
  }

  it('comments are ignored, an event name does not carry over to the next frame, [DONE] is data like any other', () => {
    assert.deepEqual(frames([bytes(': a\n\n: b\n')]), []);
    assert.deepEqual(frames([bytes('event: ping\ndata: 1\n\ndata: 2\n\n: done\ndata: [DONE]\n\n')]), [
      { event: 'ping', data: '1' },
      { event: undefined, data: '2' },
      { event: undefined, data: '[DONE]' },
    ]);
  });

  it('a leading byte order mark is dropped, also cut across reads', () => {
    const withBom = new Uint8Array([0xef, 0xbb, 0xbf, ...bytes('data: x\n\n')]);
    assert.deepEqual(frames([withBom]), [{ event: undefined, data: 'x' }]);
    assert.deepEqual(frames([withBom.subarray(0, 1), withBom.subarray(1, 2), withBom.subarray(2)]), [{ event: undefined, data: 'x' }]);
  });

  it('a UTF-8 sequence cut by a read is decoded whole', () => {
    const whole = bytes('data: é€😀\n\n');
    for (let at = 7; at < 16; at++) assert.deepEqual(frames([whole.subarray(0, at), whole.subarray(at)]), [{ event: undefined, data: 'é€😀' }]);
  });

  it('end() dispatches a last event that lacked its blank line, and reports a dangling line that is not SSE', () => {
    assert.deepEqual(frames([bytes('data: 1\n\ndata: 2')]), [
      { event: undefined, data: '1' },
      { event: undefined, data: '2' },
    ]);
    assert.deepEqual(frames([bytes('data: 1\n\n<html')]), [{ event: undefined, data: '1' }, 'invalid line is not server-sent events: <html…']);
  });

  it('an invalid retry is harmless: sluice never reconnects upstream', () => {
    assert.deepEqual(frames([bytes('retry: soon\ndata: 1\n\n')]), [{ event: undefined, data: '1' }]);
  });

  it('an event held over the buffer limit between reads fails the stream once, and nothing follows', () => {
    const limit = 'invalid Buffered data exceeded max buffer size of 64 characters';
    const long = bytes(`data: ${'x'.repeat(100)}\n\ndata: after\n\n`);
    const oneByte = (whole: Uint8Array) => [...whole].map((b) => new Uint8Array([b]));
    assert.deepEqual(frames(oneByte(long), 64), [limit]);
    // Many short data lines of one event count together.
    assert.deepEqual(frames(oneByte(bytes(`${'data: 0123456789\n'.repeat(8)}\n`)), 64), [limit]);
    assert.deepEqual(frames(oneByte(bytes(`data: ${'x'.repeat(50)}\n\n`)), 64), [{ event: undefined, data: 'x'.repeat(50) }]);
    // The limit is on what waits for more bytes: an event whole in one read is in memory already.
    assert.deepEqual(frames([long], 64), [
      { event: undefined, data: 'x'.repeat(100) },
      { event: undefined, data: 'after' },
    ]);
  });

  it('by default a line without an end is held to 4 MiB, not read into memory without bound', () => {
    const mib = bytes('x'.repeat(1024 * 1024));
    const seen = frames([bytes('data: '), ...Array.from({ length: 6 }, () => mib), bytes('\n\n')]);
    assert.deepEqual(seen, ['invalid Buffered data exceeded max buffer size of 4194304 characters']);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSseFramer } from './parse-upstream.ts';

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

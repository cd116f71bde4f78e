import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SseProbe } from './sse-probe.ts';
import { EXPECTED_TEXT, scriptedStream } from './upstream-frames.ts';

const body = (protocol: 'openai' | 'anthropic') => {
  const s = scriptedStream(protocol, 'bench-fast');
  return Buffer.concat([s.head, ...s.tokens, s.tail]).toString('utf8');
};

/** Feeds `text` in pieces of `size`; returns the index of the piece that carried the first token. */
function feed(probe: SseProbe, text: string, size: number): number {
  let first = -1;
  for (let i = 0, n = 0; i < text.length; i += size, n++) {
    if (probe.push(text.slice(i, i + size)) && first === -1) first = n;
  }
  return first;
}

/** Where the first frame with text ends. */
const firstTokenEnd = (text: string) => text.indexOf('\n\n', text.indexOf('"Rivers"')) + 2;

describe('SseProbe', () => {
  it('finds the first token, the text and the terminator whatever the split', () => {
    for (const protocol of ['openai', 'anthropic'] as const) {
      const text = body(protocol);
      for (const size of [1, 7, 64, 1000, text.length]) {
        const probe = new SseProbe(protocol, true);
        assert.equal(feed(probe, text, size), Math.ceil(firstTokenEnd(text) / size) - 1, `${protocol} split ${size}`);
        assert.deepEqual([probe.text, probe.contentFrames, probe.usage, probe.complete], [EXPECTED_TEXT, 20, true, true]);
      }
    }
  });

  it('stops parsing after the first token unless asked for the whole stream, and still checks the end', () => {
    const text = body('openai');
    const probe = new SseProbe('openai', false);
    assert.equal(feed(probe, text, 50), Math.ceil(firstTokenEnd(text) / 50) - 1);
    assert.deepEqual([probe.text, probe.contentFrames, probe.usage, probe.complete], ['', 1, false, true]);
  });

  it('reports a stream cut before its terminator as incomplete', () => {
    for (const protocol of ['openai', 'anthropic'] as const) {
      const text = body(protocol);
      const probe = new SseProbe(protocol, true);
      probe.push(text.slice(0, text.length - 5));
      assert.equal(probe.complete, false);
    }
  });
});

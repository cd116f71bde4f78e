import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { anthropicStreamBody } from '../../../test/helpers/anthropic-fixtures.ts';
import { prng } from '../../../test/helpers/fake-upstream.ts';
import { listFixtures } from '../../../test/helpers/fixtures.ts';
import { commonEvent } from './common-event.ts';
import { textDelta } from './text-delta.ts';

/** The `data:` texts of a recording as the SSE framer hands them over (one leading space dropped). */
function recordedData(name: string): string[] {
  return anthropicStreamBody(name)
    .toString('utf8')
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
}

/** What the full path takes from an event's text: JSON.parse, then the hand check; undefined where it would not. */
function fullPath(data: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return undefined;
  }
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? commonEvent(parsed as Record<string, unknown>) : undefined;
}

const TEXT = (text: string, index = 0) =>
  `{"type":"content_block_delta","index":${index},"delta":{"type":"text_delta","text":${JSON.stringify(text)}}}`;

describe('textDelta (Anthropic text deltas without JSON.parse)', () => {
  const recordings = listFixtures('anthropic', ['.sse', '.jsonl']);

  it('reads every recorded event it takes exactly as JSON.parse does, and takes most text deltas', () => {
    let taken = 0;
    let deltas = 0;
    for (const name of recordings) {
      for (const data of recordedData(name)) {
        if (data.includes('"text_delta"')) deltas++;
        const payload = textDelta(data);
        if (payload === undefined) continue;
        taken++;
        assert.deepEqual(payload, JSON.parse(data), `${name}: ${data}`);
      }
    }
    assert.ok(deltas > 0 && taken / deltas > 0.9, `only ${taken} of ${deltas} recorded text deltas were taken`);
  });

  it('decodes escapes, surrogate pairs and any index as JSON.parse does', () => {
    for (const text of ['line\nbreak', 'a "quoted" \\ word', 'é and \u00e9', '😀', '\u2028', '', ' '])
      for (const index of [0, 7, 12, 123456789012345])
        for (const padding of ['', ' ', '          '])
          assert.deepEqual(textDelta(`${TEXT(text, index).slice(0, -1)}${padding}}`), JSON.parse(TEXT(text, index)), `${text} at ${index}`);
    assert.deepEqual(textDelta(String.raw`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\u00e9\/\t"}}`), {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: 'é/\t' },
    });
  });

  it('leaves to the full path every other form, and what JSON.parse refuses', () => {
    for (const data of [
      '{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"a"}}',
      '{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"a"}}',
      '{"type":"content_block_delta","index":1.5,"delta":{"type":"text_delta","text":"a"}}',
      '{"type":"content_block_delta","index":1234567890123456,"delta":{"type":"text_delta","text":"a"}}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"},"usage":{}}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","extra":1}}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}} ',
      '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}\t}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"} ',
      '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"  }}',
      '{"type":"content_block_delta", "index":0,"delta":{"type":"text_delta","text":"a"}}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"a"}}',
      '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\nb"}}',
      String.raw`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\x"}}`,
      String.raw`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\"}}`,
      String.raw`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\u12"}}`,
      '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}',
    ])
      assert.equal(textDelta(data), undefined, data);
  });

  it('takes nothing the full path reads otherwise, over seeded random edits of recorded events', () => {
    const recorded = recordings.flatMap(recordedData).filter((data) => textDelta(data) !== undefined);
    const pieces = ['"', '\\', '{', '}', '[', ']', ',', ':', ' ', '0', '1', '-', '.', 'e', 'n', '\\u00', '\\n', '\n', 'é', '\ud800'];
    const random = prng(29);
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)] as T;
    let taken = 0;
    for (let n = 0; n < 20_000; n++) {
      let data = pick(recorded);
      for (let edits = 1 + Math.floor(random() * 3); edits > 0; edits--) {
        const at = Math.floor(random() * (data.length + 1));
        const cut = random() < 0.5 ? Math.floor(random() * 3) : 0;
        data = data.slice(0, at) + (random() < 0.7 ? pick(pieces) : '') + data.slice(at + cut);
      }
      const payload = textDelta(data);
      if (payload === undefined) continue;
      taken++;
      assert.deepEqual(payload, fullPath(data), data);
    }
    assert.ok(taken > 1_000, `only ${taken} edited events were taken: the edits no longer exercise the reader`);
  });
});

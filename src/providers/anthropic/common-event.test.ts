import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { anthropicPayloads } from '../../../test/helpers/anthropic-fixtures.ts';
import { listFixtures } from '../../../test/helpers/fixtures.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { commonEvent } from './common-event.ts';
import { AnthropicEventDecoder } from './decode-stream.ts';
import { type AnthropicStreamPayload, streamPayloadSchema } from './payload-schema.ts';

/** A recording's events through the decoder, each payload taken as `check` gives it. */
function decoded(name: string, check: (raw: Record<string, unknown>) => AnthropicStreamPayload): CanonicalEvent[] {
  const decoder = new AnthropicEventDecoder();
  const out: CanonicalEvent[] = [];
  for (const payload of anthropicPayloads(name)) decoder.decode(check(payload), out);
  return out;
}

describe('commonEvent (the hand check that skips zod for per-token Anthropic events)', () => {
  const recordings = listFixtures('anthropic', ['.sse', '.jsonl']);

  it('takes most recorded events, and every recording decodes exactly as through zod alone', () => {
    let taken = 0;
    let all = 0;
    for (const name of recordings) {
      for (const payload of anthropicPayloads(name)) {
        all++;
        if (commonEvent(payload) === undefined) continue;
        taken++;
        assert.ok(streamPayloadSchema.safeParse(payload).success, `${name}: taken by hand, refused by the schema`);
      }
      const fast = decoded(name, (raw) => commonEvent(raw) ?? streamPayloadSchema.parse(raw));
      assert.deepEqual(
        fast,
        decoded(name, (raw) => streamPayloadSchema.parse(raw)),
        name,
      );
    }
    assert.ok(taken / all > 0.6, `only ${taken} of ${all} recorded events took the fast path`);
  });

  it('leaves everything unusual to the schema', () => {
    const variants: [string, Record<string, unknown>][] = [
      ['no type', { index: 0, delta: { type: 'text_delta', text: 'hi' } }],
      ['a message', { type: 'message_start', message: { id: 'm' } }],
      ['a content block', { type: 'content_block_start', index: 0, content_block: { type: 'text' } }],
      ['usage', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } }],
      ['a negative index', { type: 'content_block_delta', index: -1, delta: { type: 'text_delta', text: 'hi' } }],
      ['a numeric text', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 5 } }],
      ['a delta array', { type: 'content_block_delta', index: 0, delta: [] }],
    ];
    for (const [what, raw] of variants) assert.equal(commonEvent(raw), undefined, what);
    const text = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } };
    assert.equal(commonEvent(text), text);
  });
});

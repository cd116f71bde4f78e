import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openAIPayloads } from '../../../test/helpers/fixtures.ts';
import { openAICompatibleRecordings } from '../../../test/helpers/openai-recordings.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { chunkSchema } from './chunk-schema.ts';
import { commonChunk } from './common-chunk.ts';
import { ChunkDecoder } from './decode-chunk.ts';

/** Every chunk of every OpenAI-family recording. */
function recordedChunks(): { name: string; chunk: unknown }[] {
  const out: { name: string; chunk: unknown }[] = [];
  for (const name of openAICompatibleRecordings) {
    for (const { data } of openAIPayloads(name)) {
      if (data === '[DONE]') continue;
      try {
        out.push({ name, chunk: JSON.parse(data) });
      } catch {
        // A recording of a broken stream: the frame decoder reports it before any chunk check.
      }
    }
  }
  return out;
}

/**
 * What the decoder makes of a chunk taken as is (the hand check's result) and of zod's parse: the
 * proof that skipping the schema changes nothing sluice sends or counts.
 */
function decodedBothWays(chunk: unknown): [CanonicalEvent[], CanonicalEvent[]] {
  const fast: CanonicalEvent[] = [];
  const schema: CanonicalEvent[] = [];
  new ChunkDecoder({ provider: 'up', splitThinkTags: false }).decode(chunk, fast);
  const parsed = chunkSchema.parse(chunk);
  new ChunkDecoder({ provider: 'up', splitThinkTags: false }).decodeChecked(parsed, schema);
  return [fast, schema];
}

describe('commonChunk (the hand check that skips zod for the usual chunk)', () => {
  const chunks = recordedChunks();

  it('takes most recorded chunks, and every one it takes decodes exactly as zod would have it', () => {
    let taken = 0;
    for (const { name, chunk } of chunks) {
      if (commonChunk(chunk) === undefined) continue;
      taken++;
      // A chunk it takes must be one the schema accepts too.
      assert.ok(chunkSchema.safeParse(chunk).success, `${name}: taken by hand, refused by the schema`);
      const [fast, schema] = decodedBothWays(chunk);
      assert.deepEqual(fast, schema, name);
    }
    assert.ok(taken / chunks.length > 0.8, `only ${taken} of ${chunks.length} recorded chunks took the fast path`);
  });

  it('leaves everything unusual to the schema', () => {
    const base = { id: 'c1', model: 'm', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] };
    const variants: [string, unknown][] = [
      ['a null id (the schema makes it undefined)', { ...base, id: null }],
      ['a numeric model', { ...base, model: 7 }],
      ['content parts', { ...base, choices: [{ index: 0, delta: { content: [{ type: 'text', text: 'hi' }] } }] }],
      ['logprobs', { ...base, choices: [{ index: 0, delta: { content: 'hi' }, logprobs: { content: [] } }] }],
      ['an index past the choices bound', { ...base, choices: [{ index: 128, delta: { content: 'hi' } }] }],
      ['a fractional index', { ...base, choices: [{ index: 0.5, delta: { content: 'hi' } }] }],
      ['a negative tool-call index', { ...base, choices: [{ delta: { tool_calls: [{ index: -1 }] } }] }],
      ['tool arguments as an object', { ...base, choices: [{ delta: { tool_calls: [{ function: { arguments: {} } }] } }] }],
      ['annotations', { ...base, choices: [{ delta: { annotations: [] } }] }],
      ['usage details as an array', { ...base, usage: { prompt_tokens_details: [] } }],
      ['choices as an object', { ...base, choices: {} }],
      ['an array', [base]],
    ];
    for (const [what, chunk] of variants) assert.equal(commonChunk(chunk), undefined, what);
    assert.equal(commonChunk(base), base);
  });
});

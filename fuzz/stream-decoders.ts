import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { CanonicalEvent } from '../src/protocol/canonical/events.ts';
import { createAnthropicStreamDecoder } from '../src/providers/anthropic/decode-stream.ts';
import { createBedrockStreamDecoder } from '../src/providers/bedrock/decode-stream.ts';
import { createGeminiStreamDecoder } from '../src/providers/google/decode-stream.ts';
import { createOpenAICompatibleFrameDecoder } from '../src/providers/openai-compatible/decode-stream.ts';
import { createSseStreamDecoder } from '../src/providers/sse-decoder.ts';
import type { StreamDecoder } from '../src/providers/types.ts';
import { checkEvents, comparable } from './check-events.ts';
import { type BodyCase, bodyCase, buildBody, isMutated, splitBody } from './mutate-body.ts';
import { anthropicRecordings, bedrockRecordings, geminiRecordings, openAIRecordings, type Recording } from './recordings.ts';
import { type FuzzTarget, fuzzTarget } from './run-targets.ts';

/** A fresh decoder for one stream; `variant` picks an option the decoder has (think-tag splitting). */
export type DecoderFactory = (variant: boolean) => StreamDecoder;

export const decoders: Record<string, { recordings: Recording[]; create: DecoderFactory }> = {
  'openai-compatible': {
    recordings: openAIRecordings,
    create: (splitThinkTags) =>
      createSseStreamDecoder('up', createOpenAICompatibleFrameDecoder({ provider: 'up', splitThinkTags })),
  },
  anthropic: { recordings: anthropicRecordings, create: () => createAnthropicStreamDecoder() },
  google: {
    recordings: geminiRecordings,
    create: () => {
      let n = 0;
      return createGeminiStreamDecoder({ provider: 'google', newCallId: () => `call_${n++}` });
    },
  },
  bedrock: { recordings: bedrockRecordings, create: () => createBedrockStreamDecoder('bedrock') },
};

/** Every event of a body delivered in these reads, then the decoder's end(). */
export function decodeBody(decoder: StreamDecoder, pieces: readonly Uint8Array[]): CanonicalEvent[] {
  const out: CanonicalEvent[] = [];
  for (const piece of pieces) out.push(...decoder.push(piece));
  out.push(...decoder.end());
  return out;
}

/** How a decoded stream ends for the pipeline: an error, a finish, or neither (run-stream.ts reports that truncated). */
export function verdict(events: readonly CanonicalEvent[]): 'error' | 'finish' | 'neither' {
  if (events.some((e) => e.type === 'error')) return 'error';
  return events.some((e) => e.type === 'finish') ? 'finish' : 'neither';
}

/**
 * Ids a decoder makes up (OpenAI-family calls without an id get a random one) differ between two
 * decodes of the same bytes; each is replaced by the order it first appeared in.
 */
function withStableIds(events: unknown[]): unknown[] {
  const ids = new Map<string, string>();
  return events.map((e) => {
    const event = e as CanonicalEvent;
    if (event.type !== 'tool-call-start') return e;
    if (!ids.has(event.id)) ids.set(event.id, `#${ids.size}`);
    return { ...event, id: ids.get(event.id) };
  });
}

interface DecoderInput {
  body: BodyCase;
  variant: boolean;
}

function streamDecoderTarget(name: string): FuzzTarget {
  const { recordings, create } = decoders[name];
  // What each recording decodes to as recorded, in one read: the oracle for unmutated inputs.
  let recorded: Map<Recording, string> | undefined;
  return fuzzTarget<DecoderInput>({
    name: `${name}-stream`,
    family: 'stream decoders',
    what: `${name} decode-stream over its ${recordings.length} recordings, split at random reads, truncated, bytes flipped/inserted/deleted/duplicated, JSON fields made hostile: no throw, events within the canonical contract, nothing after the end marker, the same events however the body is split, unmutated recordings end as recorded`,
    input: () => fc.record({ body: bodyCase(recordings), variant: fc.boolean() }),
    assert({ body: c, variant }) {
      recorded ??= new Map(recordings.map((r) => [r, verdict(decodeBody(create(false), [Buffer.concat(r.blocks)]))]));
      const bytes = buildBody(c);
      const whole = decodeBody(create(variant), [bytes]);
      checkEvents(whole);
      const split = decodeBody(create(variant), splitBody(bytes, c.splits));
      assert.deepEqual(
        withStableIds(comparable(split)),
        withStableIds(comparable(whole)),
        'the events depend on how the body was split',
      );
      if (!isMutated(c) && c.recording.blocks.length <= c.head + c.tail) {
        assert.equal(verdict(whole), recorded.get(c.recording), `${c.recording.name} as recorded`);
      }
    },
  });
}

export const streamDecoderTargets: FuzzTarget[] = Object.keys(decoders).map(streamDecoderTarget);

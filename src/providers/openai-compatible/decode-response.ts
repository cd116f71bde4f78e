import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { ChunkDecoder, type ChunkDecoderOptions } from './decode-chunk.ts';

/** A non-streaming chat.completion -> canonical events (the same decoder reads `message`). */
export function decodeOpenAICompatibleResponse(body: unknown, options: ChunkDecoderOptions): CanonicalEvent[] {
  const out: CanonicalEvent[] = [];
  const decoder = new ChunkDecoder(options);
  decoder.decode(body, out);
  decoder.end(out);
  return out;
}

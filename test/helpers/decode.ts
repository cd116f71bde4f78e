import type { CanonicalEvent } from '../../src/protocol/canonical/events.ts';
import type { StreamDecoder } from '../../src/providers/types.ts';

/** Every event a stream decoder gives for these reads, in order, then what its end() adds. */
export function decodeAll<T = CanonicalEvent>(decoder: StreamDecoder<T>, pieces: Iterable<Uint8Array>): T[] {
  const out: T[] = [];
  for (const piece of pieces) out.push(...decoder.push(piece));
  out.push(...decoder.end());
  return out;
}

/** A chunk decoder: one parsed upstream JSON chunk at a time, its events appended to `out`. */
export interface JsonChunkDecoder {
  decode(raw: unknown, out: CanonicalEvent[]): void;
  end(out: CanonicalEvent[]): void;
}

/** Every event a chunk decoder gives for these chunks, in order, then what its end() adds. */
export function decodeChunks(decoder: JsonChunkDecoder, chunks: Iterable<unknown>): CanonicalEvent[] {
  const out: CanonicalEvent[] = [];
  for (const chunk of chunks) decoder.decode(chunk, out);
  decoder.end(out);
  return out;
}

import { errors } from '../../errors/catalog.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { GeminiChunkDecoder, type GeminiDecoderOptions } from './decode-chunk.ts';

/**
 * A `generateContent` answer -> canonical events. Also takes the JSON array that
 * `streamGenerateContent` returns without `alt=sse` (a server or proxy that ignored it).
 */
export function decodeGeminiResponse(body: unknown, options: GeminiDecoderOptions): CanonicalEvent[] {
  const out: CanonicalEvent[] = [];
  const decoder = new GeminiChunkDecoder(options);
  for (const chunk of Array.isArray(body) ? body : [body]) {
    if (!chunk || typeof chunk !== 'object' || Array.isArray(chunk)) {
      out.push({ type: 'error', error: errors.malformed(options.provider, 'response is not a GenerateContentResponse object') });
      return out;
    }
    decoder.decode(chunk, out);
    if (decoder.failed) return out;
  }
  decoder.end(out);
  return out;
}

import { errors } from '../../errors/catalog.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import type { SseFrame } from '../../protocol/sse/parse-upstream.ts';
import { createSseStreamDecoder, type SseFrameDecoder } from '../sse-decoder.ts';
import type { StreamDecoder } from '../types.ts';
import { GeminiChunkDecoder, type GeminiDecoderOptions } from './decode-chunk.ts';

/**
 * `streamGenerateContent?alt=sse` frames -> canonical events. Every `data:` frame is a whole
 * GenerateContentResponse (CRLF-framed, no `[DONE]`); an error arrives as `{"error":{...}}`.
 */
export function createGeminiFrameDecoder(options: GeminiDecoderOptions): SseFrameDecoder {
  const chunks = new GeminiChunkDecoder(options);
  let done = false;
  const malformed = (out: CanonicalEvent[], detail: string) => {
    done = true;
    out.push({ type: 'error', error: errors.malformed(options.provider, detail) });
  };
  return {
    frame(frame: SseFrame, out: CanonicalEvent[]) {
      if (done) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(frame.data);
      } catch {
        malformed(out, `chunk is not JSON: ${frame.data.slice(0, 120)}`);
        return;
      }
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
        malformed(out, `chunk is not an object: ${frame.data.slice(0, 120)}`);
        return;
      }
      chunks.decode(parsed, out);
      if (chunks.failed) done = true;
    },
    end(out: CanonicalEvent[]) {
      if (!done) chunks.end(out);
    },
  };
}

export function createGeminiStreamDecoder(options: GeminiDecoderOptions): StreamDecoder {
  return createSseStreamDecoder(options.provider, createGeminiFrameDecoder(options));
}

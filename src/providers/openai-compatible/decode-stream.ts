import { errors } from '../../errors/catalog.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import type { SseFrame } from '../../protocol/sse/parse-upstream.ts';
import type { SseFrameDecoder } from '../sse-decoder.ts';
import { ChunkDecoder, type ChunkDecoderOptions } from './decode-chunk.ts';
import { streamErrorFrom } from './stream-error.ts';
import { TextChunkReader } from './text-only-chunk.ts';

/** SSE frames of a Chat Completions stream -> canonical events. */
export function createOpenAICompatibleFrameDecoder(options: ChunkDecoderOptions): SseFrameDecoder {
  const chunks = new ChunkDecoder(options);
  const texts = new TextChunkReader();
  let done = false;
  return {
    frame(frame: SseFrame, out: CanonicalEvent[]) {
      if (done) return;
      const data = frame.data;
      if (data === '[DONE]') {
        done = true;
        // Nothing is read after the end marker: held-back text goes out before it.
        chunks.end(out);
        out.push({ type: 'end' });
        return;
      }
      // Most chunks carry only text: read without JSON.parse (text-only-chunk.ts).
      if (frame.event !== 'error') {
        const text = texts.read(data);
        if (text !== undefined && chunks.decodeText(text, out)) return;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(data);
      } catch {
        done = true;
        out.push({ type: 'error', error: errors.malformed(options.provider, `chunk is not JSON: ${data.slice(0, 120)}`) });
        return;
      }
      // Groq (and others) report a mid-stream failure as a named `event: error` frame.
      if (frame.event === 'error') {
        done = true;
        out.push({ type: 'error', error: streamErrorFrom(options.provider, parsed) });
        return;
      }
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
        done = true;
        out.push({ type: 'error', error: errors.malformed(options.provider, `chunk is not an object: ${data.slice(0, 120)}`) });
        return;
      }
      if (isVendorEvent(parsed)) {
        out.push({ type: 'vendor', data });
        return;
      }
      chunks.decode(parsed, out);
      if (chunks.failed) done = true;
    },
    end(out: CanonicalEvent[]) {
      chunks.end(out);
    },
  };
}

/** `{"type":"x_research.searching",...}`: a vendor's event among the chunks (chunks have no `type`). */
function isVendorEvent(payload: object): boolean {
  const type = (payload as { type?: unknown }).type;
  return typeof type === 'string' && type.startsWith('x_');
}

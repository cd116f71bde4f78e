import { errors } from '../errors/catalog.ts';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import { createSseFramer, type SseFrame } from '../protocol/sse/parse-upstream.ts';
import type { StreamDecoder } from './types.ts';

/** What an SSE-speaking provider decodes: one frame at a time, pushing events into `out`. */
export interface SseFrameDecoder {
  frame(frame: SseFrame, out: CanonicalEvent[]): void;
  end(out: CanonicalEvent[]): void;
}

/**
 * Bytes -> SSE frames -> canonical events. A line that is not SSE fails the stream with an
 * error event (never silently dropped), after which the rest of the body is ignored.
 */
export function createSseStreamDecoder(provider: string, frames: SseFrameDecoder): StreamDecoder {
  let out: CanonicalEvent[] = [];
  // Set by a line that is not SSE, or by the upstream's end marker (`[DONE]`): after it, bytes that
  // came in the same read must not fail a stream that a later read would have left finished.
  let broken = false;
  const framer = createSseFramer({
    onFrame: (frame) => {
      if (broken) return;
      frames.frame(frame, out);
      if (out.length > 0 && out[out.length - 1].type === 'end') broken = true;
    },
    onInvalid: (detail) => {
      if (broken) return;
      broken = true;
      out.push({ type: 'error', error: errors.malformed(provider, detail) });
    },
  });
  const take = (): CanonicalEvent[] => {
    const events = out;
    out = [];
    return events;
  };
  return {
    push(bytes) {
      if (!broken) framer.push(bytes);
      return take();
    },
    end() {
      if (!broken) {
        framer.end();
        frames.end(out);
      }
      return take();
    },
  };
}

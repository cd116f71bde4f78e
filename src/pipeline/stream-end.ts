import type { GatewayError } from '../errors/gateway-error.ts';

export interface StreamEndState {
  /** What ended the stream, or null for a normal end. */
  failure: GatewayError | null;
  /** The client already has its whole response (closing frames sent at the upstream's end marker). */
  finishedEarly: boolean;
  /** Nothing can be written any more (the client went away, or the response already ended). */
  writerEnded: boolean;
  /** Headers are out: the client is reading a stream. */
  committed: boolean;
  /** Frames of the last read are waiting to be written (they go before the end). */
  held: boolean;
  /**
   * A failure before any output is told in a stream too (a 200, the error frame, `[DONE]`), as the
   * accounting reference does ("Provider returned 502 Bad Gateway"), not as an HTTP error.
   */
  inStream?: boolean;
}

/**
 * How a stream ends, decided in one place for every exit path:
 * - `done`: nothing left to send (finished early, or the client is gone);
 * - `finish`: the closing frames (usage, terminal event), then `[DONE]`;
 * - `http-error`: nothing was sent yet, so the failure is an HTTP error the SDKs can retry;
 * - `fail`: the stream started (or its profile tells every failure in the stream), so the failure
 *   is an error frame, then `[DONE]`.
 */
export type StreamEnd = 'done' | 'finish' | 'http-error' | 'fail';

export function streamEnd(s: StreamEndState): StreamEnd {
  if (s.finishedEarly) return 'done';
  if (!s.failure) return 'finish';
  if (s.writerEnded) return 'done';
  if (!s.committed && !s.held && !s.inStream) return 'http-error';
  return 'fail';
}

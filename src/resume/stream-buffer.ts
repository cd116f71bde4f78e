import type { FrameRecording } from '../protocol/sse/sse-writer.ts';

/**
 * Recent streams' frames, kept so that a client that lost its connection can fetch the frames it
 * missed (GET /v1/streams/{request_id} with `Last-Event-ID`, docs/streams/resume.md). In memory
 * (memory-buffer.ts), or in memory and in Redis so that another instance can serve the resume
 * (redis-buffer.ts).
 */
export interface StreamBuffer {
  /** Where one request's stream records its frames (nothing is kept until its headers go out). */
  recording(requestId: string): StreamRecording;
  /** A stream by request id, as a resume finds it. */
  find(requestId: string): Promise<StreamLookup>;
  start(): Promise<void>;
  /** At shutdown: ends the resumes served from another instance's stream, and lets go of Redis. */
  close(): Promise<void>;
}

export interface StreamRecording extends FrameRecording {
  /** The project of the caller (null: the master key): only its keys may resume the stream. */
  claim(projectId: string | null): void;
}

export type StreamLookup =
  | { state: 'unknown' }
  /** The stream was kept and no longer is; `why` says why, for the 410. */
  | { state: 'gone'; projectId: string | null; why: string }
  | { state: 'kept'; projectId: string | null; stream: KeptStream };

export interface KeptStream {
  /** The stream's Content-Type, as its client first got it. */
  readonly contentType: string;
  /** The id of the last frame recorded so far (a resume after it is valid while the stream runs). */
  readonly lastId: number;
  /** The stream has ended (its `[DONE]`, or its abandonment, is recorded). */
  readonly ended: boolean;
  /**
   * Sends every frame after `afterId` to `send`, then, while the stream runs, each write as it is
   * recorded; `done` once nothing more will come (the stream ended, or was dropped from the
   * buffer). Returns what stops following (the resuming client went away).
   */
  follow(afterId: number, send: (frames: string) => void, done: () => void): () => void;
}

/** What the buffer is allowed to hold (config stream.resume). */
export interface BufferLimits {
  streams: number;
  /** Counted in characters of frame text (what ASCII frames take in memory). */
  bytes: number;
  /** How long a stream is kept after its last frame. */
  ttlMs: number;
}

/**
 * The frames of `text` (whose first frame has id `firstId`) from the one with id `fromId` on.
 * Comment frames carry no id; the ones before `fromId` are skipped with the frames they precede.
 */
export function framesFrom(text: string, firstId: number, fromId: number): string {
  let skip = fromId - firstId;
  if (skip <= 0) return text;
  let at = 0;
  while (at < text.length) {
    const isComment = text.charCodeAt(at) === 0x3a;
    const blank = text.indexOf('\n\n', at);
    if (blank === -1) return '';
    at = blank + 2;
    if (!isComment && --skip === 0) break;
  }
  // Comments right before the frame wanted went with the frames skipped.
  while (at < text.length && text.charCodeAt(at) === 0x3a) {
    const blank = text.indexOf('\n\n', at);
    if (blank === -1) return '';
    at = blank + 2;
  }
  return text.slice(at);
}

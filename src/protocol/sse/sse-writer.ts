import type { ServerResponse } from 'node:http';
import { DONE_FRAME, HEARTBEAT_FRAME } from './frames.ts';

export interface SseWriterOptions {
  requestId: string;
  /** `text/event-stream` plus parameters (the Responses surface adds `; charset=utf-8`). */
  contentType?: string;
  /** Comment frame after this long without output (also before the first frame). 0 disables. */
  heartbeatMs: number;
  /** Where the frames are also kept, so that a client that lost its connection can resume (src/resume/). */
  recording?: FrameRecording;
  /**
   * Gives every frame an `id:` line, its number in the stream, for `Last-Event-ID` (README
   * "Resuming a stream"). Set for a resumable stream whose config asks for them
   * (stream.resume.event_ids); the reference documents' frames have none (`data: {json}\n\n`).
   */
  eventIds?: boolean;
  /** The keep-alive and the end marker of the surface's API; OpenAI's (`: heartbeat`, `data: [DONE]`) by default. */
  dialect?: SseDialect;
}

/**
 * What an API sends to keep a quiet stream alive and after its last event: OpenAI-style streams a
 * comment and `data: [DONE]`; Anthropic's Messages API a `ping` event and nothing (its stream ends
 * at `message_stop`).
 */
export interface SseDialect {
  keepAlive: string;
  done: string;
}

const OPENAI_DIALECT: SseDialect = { keepAlive: HEARTBEAT_FRAME, done: DONE_FRAME };

/**
 * A resumable stream's copy of its frames. While it is set, the stream outlives its client: after
 * a disconnect the frames go on being recorded (the request's scope bounds how long, with
 * stream.resume.grace_s), so that the client can fetch them with `Last-Event-ID`.
 */
export interface FrameRecording {
  /** The headers went out: the stream exists from now on. */
  start(contentType: string): void;
  /** The frames of one write, as the client gets them; `lastId` is the number of the last one in the stream. */
  record(frames: string, lastId: number): void;
  /** Nothing follows (called once, after `[DONE]` or when the stream was abandoned). */
  end(): void;
}

/**
 * One client SSE response, and nothing else: headers committed lazily (at the first frame or the
 * first heartbeat, so that a failure before any output is still an HTTP error), heartbeats while
 * the stream is quiet, one write per call, back-pressure, and the guaranteed `[DONE]` at the end.
 * Timeouts and cancellation belong to the request's scope (pipeline/request-scope.ts).
 *
 * A recorded stream's frames are numbered (1, 2, 3, ...; `[DONE]` included, comments not): the
 * `Last-Event-ID` a client sends to resume is the number of the last frame it got (README
 * "Resuming a stream"). With `eventIds` each frame carries its number in an `id:` line; otherwise
 * the bytes are the frames as given, and a stream that is not recorded is not even counted. A
 * write may hold several frames, each ending at a blank line.
 */
export class SseWriter {
  private readonly res: ServerResponse;
  private readonly options: SseWriterOptions;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private committedFlag = false;
  private endedFlag = false;
  /** The client went away while a recording goes on. */
  private clientGone = false;
  /** The id of the last frame written. */
  private lastId = 0;
  private drainWaiters: (() => void)[] = [];

  constructor(res: ServerResponse, options: SseWriterOptions) {
    this.res = res;
    this.options = options;
    res.on('close', this.onClose);
    res.on('drain', this.releaseWaiters);
    if (options.heartbeatMs > 0) this.heartbeatTimer = setTimeout(this.onHeartbeat, options.heartbeatMs);
  }

  /** Headers are out: a failure can only be told in an error frame from now on. */
  get committed(): boolean {
    return this.committedFlag;
  }

  /** Nothing more can be written: the response ended, or the client went away. */
  get ended(): boolean {
    return this.endedFlag;
  }

  /** True while the client socket is over its high-water mark: stop reading the upstream. */
  get congested(): boolean {
    return !this.clientGone && this.res.writableNeedDrain;
  }

  write(frames: string): void {
    if (this.endedFlag || frames.length === 0) return;
    if (!this.committedFlag) this.commit();
    const numbered = this.number(frames);
    this.options.recording?.record(numbered, this.lastId);
    if (this.clientGone) return;
    this.res.write(numbered);
    this.heartbeatTimer?.refresh();
  }

  /** Resolves when the client has taken the buffered frames, has gone, or `signal` aborts. */
  waitForDrain(signal: AbortSignal): Promise<void> {
    if (!this.congested || this.endedFlag || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
      this.drainWaiters.push(done);
    });
  }

  /** Normal end: the last frames, then `[DONE]` (the dialect's end marker). */
  finish(frames: string): void {
    if (!this.endedFlag) this.close(frames + this.dialect.done);
  }

  /** Failure after the stream started: the surface's error frames, then `[DONE]` (the dialect's end marker). */
  fail(errorFrames: string): void {
    if (!this.endedFlag) this.close(errorFrames + this.dialect.done);
  }

  private get dialect(): SseDialect {
    return this.options.dialect ?? OPENAI_DIALECT;
  }

  /** Stops the heartbeat without writing (the failure became an HTTP error instead). */
  dispose(): void {
    clearTimeout(this.heartbeatTimer);
    if (this.committedFlag && !this.endedFlag) this.options.recording?.end();
    this.endedFlag = true;
    this.releaseWaiters();
  }

  /**
   * The frames as they go out: as given when the stream is not recorded (nothing to count), counted
   * when it is, each with its `id:` line with `eventIds`. On the hot path (every upstream read).
   * The id lines cost one indexOf per frame and string concatenation; measured with a
   * micro-benchmark (frames built from JSON.stringify and joined with +=, as a surface does, then
   * written to a stub that UTF-8-encodes them as the socket does), best of 15 runs on the shared
   * 2-core machine: a one-frame write 1.05 -> 1.35 us, a 20-frame write 13.9 -> 25.2 us, building
   * the frames included: about 0.3 us per frame, which a stream that is not recorded no longer pays.
   */
  private number(frames: string): string {
    if (this.options.eventIds) return this.withIds(frames);
    if (this.options.recording) this.lastId += countFrames(frames);
    return frames;
  }

  /** Gives each frame of `frames` its `id:` line. */
  private withIds(frames: string): string {
    const first = frames.indexOf('\n\n');
    // The usual write, one frame (a read of one token): no slicing.
    if (first === frames.length - 2 && frames.charCodeAt(0) !== COLON) return 'id: ' + ++this.lastId + '\n' + frames;
    let numbered = '';
    let start = 0;
    while (start < frames.length) {
      const blank = frames.indexOf('\n\n', start);
      const end = blank === -1 ? frames.length : blank + 2;
      // A comment (`: ...`) is not an event: it gets no id, as heartbeats get none.
      if (frames.charCodeAt(start) !== COLON) numbered += 'id: ' + ++this.lastId + '\n';
      numbered += frames.slice(start, end);
      start = end;
    }
    return numbered;
  }

  private commit(): void {
    this.committedFlag = true;
    const contentType = this.options.contentType ?? 'text/event-stream';
    this.options.recording?.start(contentType);
    if (this.clientGone) return;
    this.res.writeHead(200, {
      'Content-Type': contentType,
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
      'X-Request-ID': this.options.requestId,
      // Tells nginx-style proxies not to buffer the stream.
      'X-Accel-Buffering': 'no',
    });
    // No flushHeaders(): a frame is always written right after, and the headers leave with it in
    // one writev (one syscall fewer per stream; `npm run bench` profiles show writev dominating).
  }

  /** The last bytes and the end of the response in one write. */
  private close(last: string): void {
    if (!this.committedFlag) this.commit();
    this.endedFlag = true;
    clearTimeout(this.heartbeatTimer);
    const numbered = this.number(last);
    const recording = this.options.recording;
    if (recording) {
      recording.record(numbered, this.lastId);
      recording.end();
    }
    if (!this.res.destroyed) this.res.end(numbered);
    this.releaseWaiters();
  }

  private releaseWaiters = (): void => {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  };

  private onHeartbeat = (): void => {
    if (this.endedFlag || this.clientGone) return;
    if (!this.committedFlag) this.commit();
    this.res.write(this.dialect.keepAlive);
    this.heartbeatTimer?.refresh();
  };

  private onClose = (): void => {
    if (!this.res.writableFinished) {
      clearTimeout(this.heartbeatTimer);
      // A recorded stream goes on without its client, for the client to resume; else it ends here.
      if (this.options.recording && !this.endedFlag) this.clientGone = true;
      else this.endedFlag = true;
    }
    this.releaseWaiters();
  };
}

const COLON = 0x3a;

/** The events among `frames` (each ending at a blank line): comments (`: heartbeat`) are none. */
function countFrames(frames: string): number {
  let count = 0;
  let start = 0;
  while (start < frames.length) {
    const blank = frames.indexOf('\n\n', start);
    if (frames.charCodeAt(start) !== COLON) count++;
    start = blank === -1 ? frames.length : blank + 2;
  }
  return count;
}

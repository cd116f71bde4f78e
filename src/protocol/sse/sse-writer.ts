import type { ServerResponse } from 'node:http';
import { DONE_FRAME, HEARTBEAT_FRAME } from './frames.ts';

export interface SseWriterOptions {
  requestId: string;
  /** `text/event-stream` plus parameters (the Responses surface adds `; charset=utf-8`). */
  contentType?: string;
  /** Comment frame after this long without output (also before the first frame). 0 disables. */
  heartbeatMs: number;
}

/**
 * One client SSE response, and nothing else: headers committed lazily (at the first frame or the
 * first heartbeat, so that a failure before any output is still an HTTP error), heartbeats while
 * the stream is quiet, one write per call, back-pressure, and the guaranteed `[DONE]` at the end.
 * Timeouts and cancellation belong to the request's scope (pipeline/request-scope.ts).
 */
export class SseWriter {
  private readonly res: ServerResponse;
  private readonly options: SseWriterOptions;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private committedFlag = false;
  private endedFlag = false;
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
    return this.res.writableNeedDrain;
  }

  write(frames: string): void {
    if (this.endedFlag || frames.length === 0) return;
    if (!this.committedFlag) this.commit();
    this.res.write(frames);
    this.heartbeatTimer?.refresh();
  }

  /** Resolves when the client has taken the buffered frames, has gone, or `signal` aborts. */
  waitForDrain(signal: AbortSignal): Promise<void> {
    if (!this.res.writableNeedDrain || this.endedFlag || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
      this.drainWaiters.push(done);
    });
  }

  /** Normal end: the last frames, then `[DONE]`. */
  finish(frames: string): void {
    if (!this.endedFlag) this.close(frames + DONE_FRAME);
  }

  /** Failure after the stream started: the surface's error frames, then `[DONE]`. */
  fail(errorFrames: string): void {
    if (!this.endedFlag) this.close(errorFrames + DONE_FRAME);
  }

  /** Stops the heartbeat without writing (the failure became an HTTP error instead). */
  dispose(): void {
    clearTimeout(this.heartbeatTimer);
    this.endedFlag = true;
    this.releaseWaiters();
  }

  private commit(): void {
    this.committedFlag = true;
    this.res.writeHead(200, {
      'Content-Type': this.options.contentType ?? 'text/event-stream',
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
    if (!this.res.destroyed) this.res.end(last);
    this.releaseWaiters();
  }

  private releaseWaiters = (): void => {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  };

  private onHeartbeat = (): void => {
    if (this.endedFlag) return;
    if (!this.committedFlag) this.commit();
    this.res.write(HEARTBEAT_FRAME);
    this.heartbeatTimer?.refresh();
  };

  private onClose = (): void => {
    if (!this.res.writableFinished) {
      this.endedFlag = true;
      clearTimeout(this.heartbeatTimer);
    }
    this.releaseWaiters();
  };
}

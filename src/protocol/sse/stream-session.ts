import type { ServerResponse } from 'node:http';
import { errors } from '../../errors/catalog.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import { DONE_FRAME, HEARTBEAT_FRAME } from './frames.ts';

export interface StreamTimings {
  /** Comment frame after this long without output (also before the first token). 0 disables. */
  heartbeatMs: number;
  /** No upstream data for this long ends the stream with `stream_idle_timeout`. 0 disables. */
  idleTimeoutMs: number;
  /** Total request deadline, `timeout_error`. 0 disables. */
  deadlineMs: number;
}

export interface StreamSessionOptions extends StreamTimings {
  requestId: string;
  /** `text/event-stream` plus parameters (the Responses surface adds `; charset=utf-8`). */
  contentType?: string;
}

/**
 * One client SSE response: the parts every surface shares. Headers are committed lazily (at the
 * first frame or the first heartbeat), so that a failure before any output is still an HTTP
 * error. Owns the timers and the abort signal that reaches the upstream request.
 */
export class StreamSession {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly res: ServerResponse;
  private readonly options: StreamSessionOptions;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private committedFlag = false;
  private endedFlag = false;
  private drainWaiters: (() => void)[] = [];

  constructor(res: ServerResponse, options: StreamSessionOptions) {
    this.res = res;
    this.options = options;
    this.signal = this.controller.signal;
    res.on('close', this.onClose);
    res.on('drain', this.onDrain);
    if (options.heartbeatMs > 0) this.heartbeatTimer = setTimeout(this.onHeartbeat, options.heartbeatMs);
    if (options.idleTimeoutMs > 0) this.idleTimer = setTimeout(this.onIdle, options.idleTimeoutMs);
    if (options.deadlineMs > 0) this.deadlineTimer = setTimeout(this.onDeadline, options.deadlineMs);
  }

  get committed(): boolean {
    return this.committedFlag;
  }

  get ended(): boolean {
    return this.endedFlag;
  }

  /** True while the client socket is over its high-water mark: stop reading the upstream. */
  get congested(): boolean {
    return this.res.writableNeedDrain;
  }

  /** Called on every upstream read; heartbeats deliberately do not count as activity. */
  upstreamActivity(): void {
    this.idleTimer?.refresh();
  }

  /** Ends the session from outside (server shutdown): the pipeline sees the reason as its error. */
  abort(reason: GatewayError): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
    // A pipeline parked on a congested client must wake up to see the abort.
    this.releaseWaiters();
  }

  write(frames: string): void {
    if (this.endedFlag || frames.length === 0) return;
    if (!this.committedFlag) this.commit();
    this.res.write(frames);
    this.heartbeatTimer?.refresh();
  }

  /** Resolves when the client has taken the buffered frames (or has gone). */
  waitForDrain(): Promise<void> {
    if (!this.res.writableNeedDrain || this.endedFlag) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Normal end: the last frames, then `[DONE]`. */
  finish(frames: string): void {
    if (this.endedFlag) return;
    this.close(frames + DONE_FRAME);
  }

  /** Failure after the stream started: the surface's error frame, then `[DONE]`. */
  fail(errorFrame: string): void {
    if (this.endedFlag) return;
    this.close(errorFrame + DONE_FRAME);
  }

  /** Releases timers without writing (used when the failure became an HTTP error instead). */
  dispose(): void {
    this.clearTimers();
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
    this.clearTimers();
    if (!this.res.destroyed) this.res.end(last);
    this.releaseWaiters();
  }

  private clearTimers(): void {
    clearTimeout(this.heartbeatTimer);
    clearTimeout(this.idleTimer);
    clearTimeout(this.deadlineTimer);
  }

  private releaseWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }

  private onHeartbeat = (): void => {
    if (this.endedFlag) return;
    if (!this.committedFlag) this.commit();
    this.res.write(HEARTBEAT_FRAME);
    this.heartbeatTimer?.refresh();
  };

  private onIdle = (): void => {
    // While the client is congested the pipeline is not reading the upstream, so its silence
    // says nothing: a slow reader is bounded by the deadline, not blamed on the upstream.
    if (this.res.writableNeedDrain && !this.endedFlag) {
      this.idleTimer?.refresh();
      return;
    }
    this.abort(errors.idleTimeout(this.options.idleTimeoutMs / 1000));
  };

  private onDeadline = (): void => {
    this.abort(errors.deadline(this.options.deadlineMs / 1000));
  };

  private onDrain = (): void => {
    // Reading the upstream resumes now: its silence is measured from here.
    this.idleTimer?.refresh();
    this.releaseWaiters();
  };

  private onClose = (): void => {
    if (!this.res.writableFinished) {
      this.endedFlag = true;
      this.clearTimers();
      this.abort(errors.cancelled('The client closed the connection.'));
    }
    this.releaseWaiters();
  };
}

import type { Accountant } from '../accounting/accountant.ts';
import { errors } from '../errors/catalog.ts';
import { type GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import type { CanonicalEvent, McpStep } from '../protocol/canonical/events.ts';
import { type SseDialect, SseWriter } from '../protocol/sse/sse-writer.ts';
import type { Exchange } from './exchange.ts';
import type { RequestScope } from './request-scope.ts';
import { type StreamEnd, streamEnd } from './stream-end.ts';
import { next, type StreamEvent, type StreamState } from './stream-states.ts';

/**
 * A client wire format over a stream of source items (canonical events, or relayed upstream
 * frames). The surface keeps its own state; the pipeline owns the session and the exits.
 */
export interface StreamSurface<T> {
  /** Frames for one item ('' for none). */
  encode(item: T): string;
  /** Set when an item reported a failure: the stream ends after that item's frames. */
  readonly failure: GatewayError | null;
  /** Every started output has finished: a normal end is legitimate. */
  readonly complete: boolean;
  /** The source said nothing follows (an `end` event): remaining frames can wait for the closing. */
  readonly ended: boolean;
  /** Frames that go before the first frame (e.g. the accounting profile's usage_start). */
  opening(signal: AbortSignal): Promise<string>;
  /**
   * The opening goes out when the upstream accepts the request (its response headers), not with
   * its first event: the stream is committed then, so a failure after it is an error frame.
   */
  readonly openOnAcknowledge?: boolean;
  /** Frames between the last item and `[DONE]` on success (usage, terminal event). */
  closing(signal: AbortSignal): Promise<string>;
  /**
   * Frames for a failure after the stream started, before `[DONE]`: the usage so far where the
   * surface reports usage, then the error. `signal` bounds a local count of the usage (undefined
   * once the scope is aborted: the count's own bound, ~1 s, applies).
   */
  failureFrames(error: GatewayError, signal: AbortSignal | undefined): Promise<string>;
  /** The error's frames alone, when the usage so far could not be had (a usage or pricing bug). */
  errorFrames(error: GatewayError): string;
  /**
   * UTF-8 bytes of model output in a read's items, what a budget watch prices before the read is
   * encoded (the relay reads its output deltas for it). A surface without it is held to its
   * budget at settlement only.
   */
  measure?(items: readonly T[]): number;
  /** Frames that end the output now as `length` (a budget stop), before the closing frames. */
  stop?(): string;
}

/**
 * What every surface over canonical events does with an event before rendering it: the
 * accountant sees it, and an error event becomes the stream's failure.
 */
export abstract class CanonicalSurface implements StreamSurface<CanonicalEvent> {
  failure: GatewayError | null = null;
  ended = false;
  /** The highest choice index measured with output (the choices a budget stop finishes). */
  private lastChoice = 0;
  protected readonly accountant: Accountant;

  constructor(accountant: Accountant) {
    this.accountant = accountant;
  }

  abstract readonly complete: boolean;
  abstract opening(signal: AbortSignal): Promise<string>;
  abstract closing(signal: AbortSignal): Promise<string>;
  abstract failureFrames(error: GatewayError, signal: AbortSignal | undefined): Promise<string>;
  abstract errorFrames(error: GatewayError): string;
  protected abstract render(event: CanonicalEvent): string;

  encode(event: CanonicalEvent): string {
    this.accountant.observe(event);
    switch (event.type) {
      case 'error':
        this.failure = event.error;
        return '';
      case 'end':
        this.ended = true;
        return '';
    }
    return this.render(event);
  }

  measure(events: readonly CanonicalEvent[]): number {
    let bytes = 0;
    for (const event of events) {
      let text: string;
      switch (event.type) {
        case 'text':
        case 'reasoning':
        case 'refusal':
          text = event.text;
          break;
        case 'tool-call-start':
          text = event.name;
          break;
        case 'tool-call-delta':
          text = event.arguments;
          break;
        case 'mcp':
          bytes += mcpBytes(event.step);
          continue;
        default:
          continue;
      }
      bytes += Buffer.byteLength(text, 'utf8');
      if (event.choice > this.lastChoice) this.lastChoice = event.choice;
    }
    return bytes;
  }

  /**
   * Finishes every choice that had output with `length`. The accountant is not told: the finish
   * is sluice's, not the upstream's, and the usage of a stream cut short is completed by count.
   */
  stop(): string {
    let frames = '';
    for (let choice = 0; choice <= this.lastChoice; choice++) frames += this.render({ type: 'finish', choice, reason: 'length' });
    this.ended = true;
    return frames;
  }
}

/**
 * What the MCP tool loop (src/mcp/tool-loop.ts) adds to a stream's cost: the arguments the model
 * writes for the calls sluice runs, and the conversation each further model call is sent, held
 * to the budget like output (an upper bound: no model prices input above output).
 */
function mcpBytes(step: McpStep): number {
  if (step.kind === 'call-arguments') return Buffer.byteLength(step.delta, 'utf8');
  return step.kind === 'next-step' ? step.inputBytes : 0;
}

/** How long an upstream may take to close after its end marker before its connection is cut. */
const DRAIN_MS = 2_000;

export interface StreamTimings {
  /** Comment frame after this long without output (also before the first token). 0 disables. */
  heartbeatMs: number;
  /** No upstream data for this long, once it answered, ends the stream with `stream_idle_timeout`. 0 disables. */
  idleTimeoutMs: number;
}

export interface RunStreamOptions {
  provider: string;
  timings: StreamTimings;
  contentType?: string;
  /** The surface API's keep-alive and end marker (sse-writer.ts); OpenAI's by default. */
  dialect?: SseDialect;
  /** The upstream acknowledged the request (2xx). */
  onAcknowledged?: () => void;
  /** A failure before any output is an error frame in a 200 stream, not an HTTP error (stream-end.ts). */
  upstreamFailureInStream?: boolean;
}

/**
 * The one streaming loop every surface shares: opens the source with the scope's abort signal,
 * writes each upstream read's frames in one write, pauses reading while the client is congested,
 * and ends every exit path as `streamEnd` decides: a failed stream's last frames are its usage so
 * far, its error, then `[DONE]`, like a finished one's are its usage then `[DONE]`. A client that
 * leaves under the `drain` policy (RequestScope) does not stop the reading: the upstream is read
 * to its end, every item still seen by the surface (so by the accountant), nothing written.
 * Returns the failure, if any, for the ledger. The states it goes through, and the events that
 * move it, are the table of stream-states.ts (docs/streams/lifecycle.md).
 */
export function runStream<T>(
  exchange: Exchange,
  scope: RequestScope,
  open: (signal: AbortSignal) => Promise<AsyncIterable<T[]>>,
  surface: StreamSurface<T>,
  options: RunStreamOptions,
): Promise<GatewayError | null> {
  return new StreamRun(exchange, scope, surface, options).run(open);
}

/**
 * One stream: its state (stream-states.ts) and what it keeps beside it. A read goes through
 * `read` and the steps after it, synchronously unless it has to wait (a budget reservation that
 * must grow, the opening, the closing, a congested client): a read costs no promise of its own,
 * and a read that changes nothing (`read` in the table) is not looked up. The steps return true to
 * read on, false to leave the loop, or a promise of either.
 */
class StreamRun<T> {
  private state: StreamState = 'opening';
  private readonly exchange: Exchange;
  private readonly scope: RequestScope;
  private readonly surface: StreamSurface<T>;
  private readonly options: RunStreamOptions;
  private readonly writer: SseWriter;
  /** What ended the stream, null for a normal end; `cause` is its event, taken when the stream ends. */
  private failure: GatewayError | null = null;
  private cause: StreamEvent = 'upstream-end';
  /** Frames of a read that could not be written (the stream failed at its end marker). */
  private held = '';
  /** What the budget's stop sends before the closing frames (the opening if none was sent, the stop). */
  private stopFrames = '';
  private outputBytes = 0;
  /** The opening sent on the upstream's acceptance, until it is written (see acknowledge). */
  private early: Promise<void> | undefined;
  private idle: NodeJS.Timeout | undefined;
  private drainTimer: NodeJS.Timeout | undefined;
  /** The aborts of the stream's own timers, told apart from the scope's others by identity. */
  private silence: GatewayError | undefined;
  private cut: GatewayError | undefined;

  constructor(exchange: Exchange, scope: RequestScope, surface: StreamSurface<T>, options: RunStreamOptions) {
    this.exchange = exchange;
    this.scope = scope;
    this.surface = surface;
    this.options = options;
    this.writer = new SseWriter(exchange.res, {
      requestId: exchange.requestId,
      contentType: options.contentType,
      dialect: options.dialect,
      heartbeatMs: options.timings.heartbeatMs,
      recording: exchange.resume?.recording,
      // `id:` lines only on a stream that can be resumed, and only when the operator asks for them.
      eventIds: exchange.resume?.eventIds === true,
    });
  }

  async run(open: (signal: AbortSignal) => Promise<AsyncIterable<T[]>>): Promise<GatewayError | null> {
    try {
      const batches = await open(this.scope.signal);
      this.acknowledge();
      for await (const batch of batches) {
        const go = this.read(batch);
        if (go === true) continue;
        if (go === false || !(await go)) break;
      }
      if (!this.failure && this.state !== 'closing' && !this.surface.complete && !this.scope.signal.aborted) {
        this.fail(errors.truncated(this.options.provider), 'truncated');
      }
    } catch (err) {
      const aborted = this.scope.signal.aborted;
      this.fail(toGatewayError(aborted ? this.scope.signal.reason : err), aborted ? this.abortEvent() : 'upstream-error');
    } finally {
      clearTimeout(this.drainTimer);
      if (this.idle) clearTimeout(this.idle);
    }
    return this.settle();
  }

  private to(event: StreamEvent): void {
    this.state = next(this.state, event);
  }

  private fail(error: GatewayError, cause: StreamEvent): void {
    this.failure = error;
    this.cause = cause;
  }

  /** The upstream accepted the request. */
  private acknowledge(): void {
    this.options.onAcknowledged?.();
    this.to('acknowledged');
    // The accounting profile's usage_start: "thinking…" states light up while the model thinks
    // (reference/accounting-events.txt: "as soon as the upstream provider acknowledges").
    // It is written once ready without holding up the reading: a body that comes with a reset at
    // once must be read before the reset's error discards it. Every later write waits for it.
    if (this.surface.openOnAcknowledge) {
      this.early = this.surface.opening(this.scope.signal).then((frames) => this.writer.write(frames));
      this.early.catch(() => {});
    }
    // Silence is measured from the upstream's answer: until then its connect and headers
    // timeouts apply (a reasoning model may take minutes before its first byte).
    const ms = this.scope.idleTimeoutMs ?? this.options.timings.idleTimeoutMs;
    if (ms > 0) this.idle = setTimeout(() => this.silent(ms), ms);
  }

  /**
   * Upstream silence: no read for `ms` ends the stream with `stream_idle_timeout`. While the client
   * is congested the loop is not reading the upstream, so its silence says nothing then: a slow
   * reader is bounded by the deadline, not blamed on the upstream.
   */
  private silent(ms: number): void {
    if (this.writer.congested && !this.writer.ended) this.idle?.refresh();
    else this.scope.abort((this.silence = errors.idleTimeout(ms / 1000)));
  }

  /** What aborted the scope, as the table names it: the stream's own timers, the client, or the deadline (or a shutdown). */
  private abortEvent(): StreamEvent {
    const reason: unknown = this.scope.signal.reason;
    if (reason === this.cut) return 'drain-timeout';
    if (reason === this.silence) return 'idle-timeout';
    // After the end marker the writer was ended by the stream itself, not by the client.
    return this.writer.ended && this.state !== 'draining' ? 'client-gone' : 'deadline';
  }

  /** One upstream read. */
  private read(batch: T[]): boolean | Promise<boolean> {
    // After the end marker the client has everything: the rest of the upstream is read, not sent.
    if (this.state === 'draining') return true;
    this.idle?.refresh();
    // The budget's check, once per read with output, before the read is encoded: a read that
    // would pass the budget is neither sent nor billed; the stream ends as `length` instead, and
    // leaving the loop cuts the upstream, which would go on generating, and costing. Usually a
    // compare; it waits only for a reservation that must grow.
    if (this.scope.watch && this.surface.measure && this.surface.stop) {
      const more = this.surface.measure(batch);
      if (more > 0) {
        const verdict = this.scope.watch(this.outputBytes + more);
        if (verdict === true) return this.stop();
        if (verdict !== false) return this.stopIf(verdict, batch, more);
        this.outputBytes += more;
      }
    }
    return this.deliver(batch);
  }

  private async stopIf(verdict: Promise<boolean>, batch: T[], more: number): Promise<boolean> {
    if (await verdict) return this.stop();
    this.outputBytes += more;
    return this.deliver(batch);
  }

  /**
   * The budget stops the stream. Leaving the loop cuts the upstream now; the closing frames, which
   * may wait for a local count of the output (the counter's first use loads it), are built after
   * it (settle), not while the upstream goes on generating.
   */
  private async stop(): Promise<boolean> {
    clearTimeout(this.idle);
    await this.early;
    this.early = undefined;
    const opened = this.state !== 'waiting' || this.surface.openOnAcknowledge === true;
    // A surface without stop() is not watched (read).
    this.stopFrames = (opened ? '' : await this.surface.opening(this.scope.signal)) + (this.surface.stop?.() ?? '');
    this.to('budget-stop');
    return false;
  }

  /** The read's frames, up to an item that reports a failure. */
  private deliver(batch: T[]): boolean | Promise<boolean> {
    let frames = '';
    for (const item of batch) {
      frames += this.surface.encode(item);
      if (this.surface.failure) break;
    }
    if (this.early) return this.afterOpening(frames, batch.length > 0);
    return this.firstOutput(frames, batch.length > 0);
  }

  /** The opening sent on acknowledge goes before any other write. */
  private async afterOpening(frames: string, items: boolean): Promise<boolean> {
    await this.early;
    this.early = undefined;
    return this.firstOutput(frames, items);
  }

  /**
   * The opening goes out with the first upstream event even when it has no frames of its own: the
   * accounting profile's usage_start is for "thinking…" states before the first token
   * (reference/accounting-events.txt: "as soon as the upstream acknowledges").
   */
  private firstOutput(frames: string, items: boolean): boolean | Promise<boolean> {
    if (this.state !== 'waiting' || !(frames || (items && !this.surface.failure))) return this.send(frames);
    this.to('first-output');
    return this.surface.openOnAcknowledge ? this.send(frames) : this.withOpening(frames);
  }

  private async withOpening(frames: string): Promise<boolean> {
    return this.send((await this.surface.opening(this.scope.signal)) + frames);
  }

  private send(frames: string): boolean | Promise<boolean> {
    const failure = this.surface.failure;
    if (this.surface.ended && !failure) return this.endMarker(frames);
    // One write per upstream read: the frames of a read leave together.
    this.writer.write(frames);
    if (failure) {
      this.fail(failure, 'upstream-error');
      return false;
    }
    // The client left: under `cancel` the reading stops (the scope's abort cut the upstream); under
    // `drain` it goes on to the upstream's end, nothing written (the writer has ended).
    if (this.writer.ended && !this.scope.clientLeft) return false;
    if (this.writer.congested) return this.waitForClient();
    return true;
  }

  private endMarker(frames: string): boolean | Promise<boolean> {
    if (this.surface.complete) return this.finishEarly(frames);
    this.held = frames;
    return false;
  }

  /**
   * Nothing follows an end marker: the client gets the rest now, with the closing frames in one
   * write. The upstream response is read to its end rather than aborted, so that its connection
   * stays reusable; one that does not close is cut after DRAIN_MS. The upstream's silence from here
   * on is not idleness: the idle timer stops before the closing's count.
   */
  private async finishEarly(frames: string): Promise<boolean> {
    clearTimeout(this.idle);
    this.writer.finish(frames + (await this.surface.closing(this.scope.signal)));
    this.to('end-marker');
    this.drainTimer = setTimeout(
      () => this.scope.abort((this.cut = errors.cancelled('The upstream did not close after its end marker.'))),
      DRAIN_MS,
    );
    return true;
  }

  private async waitForClient(): Promise<boolean> {
    await this.writer.waitForDrain(this.scope.signal);
    // Woken by an abort (shutdown, deadline) rather than a drain: stop reading at once.
    if (this.scope.signal.aborted) return false;
    // Reading the upstream resumes now: its silence is measured from here.
    this.idle?.refresh();
    return true;
  }

  /** The reading is over: the stream ends, done, failed or cancelled. */
  private async settle(): Promise<GatewayError | null> {
    // The upstream failed (or the budget stopped it) before the opening was written: it goes first.
    if (this.early) {
      try {
        await this.early;
      } catch (err) {
        if (!this.failure) this.fail(toGatewayError(err), 'upstream-error');
      }
    }
    if (this.state === 'closing') await this.closeStopped();
    // `drain`: the client left, and the upstream was read to its end (or to the deadline, or the
    // budget): the usage is whole, and the request failed as the client's cancellation.
    // A recorded stream (stream.resume) is not over for its client, who may resume it: it ends as any
    // stream does, into its recording (the writer is not ended by the disconnect then).
    if (this.scope.clientLeft && this.writer.ended) {
      this.writer.dispose();
      this.to('client-gone');
      return this.scope.clientLeft;
    }
    if (this.state === 'closing' && !this.failure) {
      this.to('closed');
      return null;
    }
    if (this.scope.signal.aborted && !this.failure && this.state !== 'draining') {
      this.fail(toGatewayError(this.scope.signal.reason), this.abortEvent());
    }
    return this.end();
  }

  /** The budget's stop: its frames, then the closing frames and `[DONE]`. */
  private async closeStopped(): Promise<void> {
    try {
      this.writer.finish(this.stopFrames + (await this.surface.closing(this.scope.signal)));
    } catch (err) {
      this.fail(toGatewayError(this.scope.signal.aborted ? this.scope.signal.reason : err), 'closing-failed');
    }
  }

  /** streamEnd's decision, carried out. */
  private async end(): Promise<GatewayError | null> {
    let end = streamEnd({
      failure: this.failure,
      finishedEarly: this.state === 'draining',
      writerEnded: this.writer.ended,
      committed: this.writer.committed,
      held: this.held !== '',
      inStream: this.options.upstreamFailureInStream,
    });
    if (end === 'finish') end = await this.close();
    if (end === 'fail' && this.failure)
      this.writer.fail(this.held + (await failureFrames(this.surface, this.failure, this.scope)));
    else if (end !== 'finish') {
      this.writer.dispose();
      if (end === 'http-error' && this.failure) this.exchange.sendError(this.failure);
    }
    // Whatever happened to the upstream after its end marker, the client's response was complete.
    const result = this.state === 'draining' ? null : this.failure;
    if (end !== 'finish') this.to(end === 'done' && this.state !== 'draining' ? 'client-gone' : this.cause);
    return result;
  }

  /** The normal end: the closing frames, then `[DONE]`. */
  private async close(): Promise<StreamEnd> {
    this.to('upstream-end');
    try {
      this.writer.finish(this.held + (await this.surface.closing(this.scope.signal)));
    } catch (err) {
      // The closing frames could not be built (a usage or pricing bug): the stream still ends,
      // with an error frame, rather than being left open.
      this.fail(toGatewayError(err), 'closing-failed');
      return this.writer.committed || this.held !== '' || this.options.upstreamFailureInStream ? 'fail' : 'http-error';
    }
    this.to('closed');
    return 'finish';
  }
}

/**
 * The failure's last frames. The usage so far is counted under the scope's signal while it runs,
 * and under the count's own bound once it was aborted (a timeout, a shutdown): the frames of a
 * stream that timed out still carry its usage. A usage that cannot be had (a usage or pricing bug,
 * which the ledger's settlement logs) leaves the error frame alone.
 */
async function failureFrames<T>(surface: StreamSurface<T>, failure: GatewayError, scope: RequestScope): Promise<string> {
  try {
    return await surface.failureFrames(failure, scope.signal.aborted ? undefined : scope.signal);
  } catch {
    return surface.errorFrames(failure);
  }
}

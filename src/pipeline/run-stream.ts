import type { Accountant } from '../accounting/accountant.ts';
import { errors } from '../errors/catalog.ts';
import { type GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import { type SseDialect, SseWriter } from '../protocol/sse/sse-writer.ts';
import type { Exchange } from './exchange.ts';
import type { RequestScope } from './request-scope.ts';
import { streamEnd } from './stream-end.ts';

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
 * Returns the failure, if any, for the ledger.
 */
export async function runStream<T>(
  exchange: Exchange,
  scope: RequestScope,
  open: (signal: AbortSignal) => Promise<AsyncIterable<T[]>>,
  surface: StreamSurface<T>,
  options: RunStreamOptions,
): Promise<GatewayError | null> {
  const writer = new SseWriter(exchange.res, {
    requestId: exchange.requestId,
    contentType: options.contentType,
    dialect: options.dialect,
    heartbeatMs: options.timings.heartbeatMs,
    recording: exchange.resume?.recording,
    // `id:` lines only on a stream that can be resumed, and only when the operator asks for them.
    eventIds: exchange.resume?.eventIds === true,
  });
  let idle: NodeJS.Timeout | undefined;
  let opened = false;
  let failure: GatewayError | null = null;
  // Frames of a read that could not be written (the stream failed at its end marker).
  let held = '';
  // The client got its whole response at the upstream's end marker; the upstream's last bytes
  // (normally just its terminating chunk) are still being read, within DRAIN_MS.
  let finishedEarly = false;
  // The caller's budget ended the stream (Admission.watch): the client got a whole response.
  let stopped = false;
  // What the budget's stop sends before the closing frames (the opening if none was sent, the stop).
  let stopFrames = '';
  let outputBytes = 0;
  let drainTimer: NodeJS.Timeout | undefined;
  // The opening sent on the upstream's acceptance, until it is written (see below).
  let early: Promise<void> | undefined;
  try {
    const batches = await open(scope.signal);
    options.onAcknowledged?.();
    // The accounting profile's usage_start: "thinking…" states light up while the model thinks
    // (reference/accounting-events.txt: "as soon as the upstream provider acknowledges").
    // It is written once ready without holding up the reading: a body that comes with a reset at
    // once must be read before the reset's error discards it. Every later write waits for it.
    if (surface.openOnAcknowledge) {
      opened = true;
      early = surface.opening(scope.signal).then((frames) => writer.write(frames));
      early.catch(() => {});
    }
    // Silence is measured from the upstream's answer: until then its connect and headers
    // timeouts apply (a reasoning model may take minutes before its first byte).
    idle = idleWatch(scope, writer, scope.idleTimeoutMs ?? options.timings.idleTimeoutMs);
    for await (const batch of batches) {
      if (finishedEarly) continue;
      idle?.refresh();
      // The budget's check, once per read with output, before the read is encoded: a read that
      // would pass the budget is neither sent nor billed; the stream ends as `length` instead, and
      // leaving the loop cuts the upstream, which would go on generating, and costing. Usually a
      // compare; it waits only for a reservation that must grow.
      if (scope.watch && surface.measure && surface.stop) {
        const more = surface.measure(batch);
        if (more > 0) {
          const verdict = scope.watch(outputBytes + more);
          if (verdict === true || (verdict !== false && (await verdict))) {
            clearTimeout(idle);
            await early;
            early = undefined;
            // Leaving the loop cuts the upstream now; the closing frames, which may wait for a local
            // count of the output (the counter's first use loads it), are built after it, not while
            // the upstream goes on generating.
            stopFrames = (opened ? '' : await surface.opening(scope.signal)) + surface.stop();
            stopped = true;
            break;
          }
          outputBytes += more;
        }
      }
      let frames = '';
      for (const item of batch) {
        frames += surface.encode(item);
        if (surface.failure) break;
      }
      if (early) {
        await early;
        early = undefined;
      }
      // The opening goes out with the first upstream event even when it has no frames of its
      // own: the accounting profile's usage_start is for "thinking…" states before the first
      // token (reference/accounting-events.txt: "as soon as the upstream acknowledges").
      if (!opened && (frames || (batch.length > 0 && !surface.failure))) {
        opened = true;
        frames = (await surface.opening(scope.signal)) + frames;
      }
      failure = surface.failure;
      if (surface.ended && !failure) {
        if (!surface.complete) {
          held = frames;
          break;
        }
        // Nothing follows an end marker: the client gets the rest now, with the closing frames in
        // one write. The upstream response is read to its end rather than aborted, so that its
        // connection stays reusable; one that does not close is cut after DRAIN_MS. The upstream's
        // silence from here on is not idleness: the idle timer stops before the closing's count.
        clearTimeout(idle);
        writer.finish(frames + (await surface.closing(scope.signal)));
        finishedEarly = true;
        drainTimer = setTimeout(
          () => scope.abort(errors.cancelled('The upstream did not close after its end marker.')),
          DRAIN_MS,
        );
        continue;
      }
      // One write per upstream read: the frames of a read leave together.
      writer.write(frames);
      if (failure || (writer.ended && !scope.clientLeft)) break;
      if (writer.congested) {
        await writer.waitForDrain(scope.signal);
        // Woken by an abort (shutdown, deadline) rather than a drain: stop reading at once.
        if (scope.signal.aborted) break;
        // Reading the upstream resumes now: its silence is measured from here.
        idle?.refresh();
      }
    }
    if (!failure && !stopped && !surface.complete && !scope.signal.aborted) failure = errors.truncated(options.provider);
  } catch (err) {
    failure = toGatewayError(scope.signal.aborted ? scope.signal.reason : err);
  } finally {
    clearTimeout(drainTimer);
    if (idle) clearTimeout(idle);
  }
  // The upstream failed (or the budget stopped it) before the opening was written: it goes first.
  if (early) {
    try {
      await early;
    } catch (err) {
      failure ??= toGatewayError(err);
    }
  }
  if (stopped) {
    try {
      writer.finish(stopFrames + (await surface.closing(scope.signal)));
    } catch (err) {
      failure = toGatewayError(scope.signal.aborted ? scope.signal.reason : err);
    }
  }
  // `drain`: the client left, and the upstream was read to its end (or to the deadline, or the
  // budget): the usage is whole, and the request failed as the client's cancellation.
  // A recorded stream (stream.resume) is not over for its client, who may resume it: it ends as any
  // stream does, into its recording (the writer is not ended by the disconnect then).
  if (scope.clientLeft && writer.ended) {
    writer.dispose();
    return scope.clientLeft;
  }
  if (stopped && !failure) return null;
  if (scope.signal.aborted && !failure && !finishedEarly) failure = toGatewayError(scope.signal.reason);

  let end = streamEnd({
    failure,
    finishedEarly,
    writerEnded: writer.ended,
    committed: writer.committed,
    held: held !== '',
    inStream: options.upstreamFailureInStream,
  });
  if (end === 'finish') {
    try {
      writer.finish(held + (await surface.closing(scope.signal)));
    } catch (err) {
      // The closing frames could not be built (a usage or pricing bug): the stream still ends,
      // with an error frame, rather than being left open.
      failure = toGatewayError(err);
      end = writer.committed || held !== '' || options.upstreamFailureInStream ? 'fail' : 'http-error';
    }
  }
  if (end === 'fail' && failure) writer.fail(held + (await failureFrames(surface, failure, scope)));
  else if (end !== 'finish') {
    writer.dispose();
    if (end === 'http-error' && failure) exchange.sendError(failure);
  }
  // Whatever happened to the upstream after its end marker, the client's response was complete.
  return finishedEarly ? null : failure;
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

/**
 * Upstream silence: no read for `ms` ends the stream with `stream_idle_timeout`. While the client
 * is congested the loop is not reading the upstream, so its silence says nothing then: a slow
 * reader is bounded by the deadline, not blamed on the upstream.
 */
function idleWatch(scope: RequestScope, writer: SseWriter, ms: number): NodeJS.Timeout | undefined {
  if (ms <= 0) return undefined;
  const timer: NodeJS.Timeout = setTimeout(() => {
    if (writer.congested && !writer.ended) timer.refresh();
    else scope.abort(errors.idleTimeout(ms / 1000));
  }, ms);
  return timer;
}

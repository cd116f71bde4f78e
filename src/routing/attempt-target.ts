import { fallbackReason } from '../errors/fallback-policy.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { AttemptLog } from './attempts.ts';
import type { HealthBook } from './health.ts';
import type { Candidate } from './plan.ts';
import { retryAfterMs } from '../upstream/retry-after.ts';

/** What every attempt loop (streamed or not) shares: the candidates in order, and where outcomes go. */
export interface AttemptContext {
  candidates: readonly Candidate[];
  health: HealthBook;
  log: AttemptLog;
  /** The request's scope: its abort (client gone, deadline) ends every attempt and stops falling back. */
  signal: AbortSignal;
}

/** The attempt gave no first output within the target's ttft_timeout_s. */
export function ttftTimeout(candidate: Candidate): GatewayError {
  return new GatewayError({
    code: 'upstream_timeout',
    status: 504,
    type: 'timeout_error',
    provider: candidate.target.provider,
    message: `${candidate.key} sent no output within ${candidate.ttftTimeoutMs / 1000}s.`,
    retryable: true,
    fallbackable: true,
  });
}

/** The non-streamed attempt's answer did not come within the target's timeout_s. */
export function answerTimeout(candidate: Candidate): GatewayError {
  return new GatewayError({
    code: 'upstream_timeout',
    status: 504,
    type: 'timeout_error',
    provider: candidate.target.provider,
    message: `${candidate.key} gave no answer within ${candidate.answerTimeoutMs / 1000}s.`,
    retryable: true,
    fallbackable: true,
  });
}

/**
 * How long an attempt may go before it is abandoned for the next target: a stream until its first
 * output (ttft_timeout_s; after it the stream's idle timeout and the deadline bound it), a whole
 * answer until it is complete (timeout_s).
 */
export interface AttemptLimit {
  ms: number;
  /** The fallback reason an expiry gives (the ledger's and provider_fallback's). */
  reason: 'ttft_timeout' | 'timeout';
  error: (candidate: Candidate) => GatewayError;
}

export const firstOutputLimit = (candidate: Candidate): AttemptLimit => ({
  ms: candidate.ttftTimeoutMs,
  reason: 'ttft_timeout',
  error: ttftTimeout,
});

export const wholeAnswerLimit = (candidate: Candidate): AttemptLimit => ({
  ms: candidate.answerTimeoutMs,
  reason: 'timeout',
  error: answerTimeout,
});

/** One try of one candidate: its own abort (its time limit) under the request's. */
export class TargetAttempt {
  readonly candidate: Candidate;
  readonly startedAt = Date.now();
  private readonly controller = new AbortController();
  readonly signal: AbortSignal;
  private timer: NodeJS.Timeout | undefined;
  /** Headers the upstream request carries for tracing (its `traceparent`); undefined when tracing is off. */
  readonly traceHeaders: Record<string, string> | undefined;
  /** The upstream answered 2xx. */
  acknowledged = false;
  private readonly limit: AttemptLimit;
  /** The limit's error once its timer fired (the attempt's own abort may also be its abandonment after a failure). */
  private expiry: GatewayError | undefined;
  private readonly requestSignal: AbortSignal;

  /** `last`: no candidate follows, so a time limit would only fail a request that may still be answered. */
  constructor(candidate: Candidate, ctx: AttemptContext, last: boolean, limit = firstOutputLimit(candidate)) {
    this.candidate = candidate;
    this.limit = limit;
    // The request's abort reaches the attempt through one listener, not AbortSignal.any: a
    // composite signal is tracked through weak references and cost ~26 us per request in the
    // bench profile (followCompositeSignal), plus its share of GC.
    this.signal = this.controller.signal;
    this.requestSignal = ctx.signal;
    if (ctx.signal.aborted) this.controller.abort(ctx.signal.reason);
    else ctx.signal.addEventListener('abort', this.follow, { once: true });
    ctx.health.begin(candidate.key);
    this.traceHeaders = ctx.log.began(candidate);
    if (limit.ms > 0 && !last) {
      this.timer = setTimeout(() => {
        this.expiry = limit.error(candidate);
        this.controller.abort(this.expiry);
      }, limit.ms);
    }
  }

  get timedOut(): boolean {
    return this.expiry !== undefined;
  }

  /** The time limit's error when it fired: what the attempt failed with, whatever the aborted call threw. */
  get timeoutError(): GatewayError | undefined {
    return this.expiry;
  }

  /** The first output came: the target is healthy, the TTFT is scored. */
  succeeded(ctx: AttemptContext): void {
    clearTimeout(this.timer);
    const ms = Date.now() - this.startedAt;
    ctx.health.succeeded(this.candidate.key, ms);
    ctx.log.succeeded(this.candidate, ms);
  }

  /**
   * The attempt failed before any output: recorded, scored, its upstream abandoned. Returns why
   * the next candidate is tried, or null when it is not (the failure is the request's): the
   * policy said no, or `hasNext` is false (the target's health still counts the failure).
   */
  failed(error: GatewayError, ctx: AttemptContext, hasNext: boolean): string | null {
    clearTimeout(this.timer);
    const timedOut = this.timedOut && !ctx.signal.aborted;
    const cause = ctx.signal.aborted ? null : timedOut ? this.limit.reason : fallbackReason(error);
    const reason = hasNext ? cause : null;
    if (cause !== null) {
      ctx.health.failed(this.candidate.key, error.code);
      const wait = error.status === 429 ? retryAfterMs(error.headers) : null;
      if (wait !== null) ctx.health.coolDown(this.candidate.key, wait);
    }
    ctx.log.failed(this.candidate, error, this.acknowledged, reason, Date.now() - this.startedAt);
    this.controller.abort(error);
    this.requestSignal.removeEventListener('abort', this.follow);
    return reason;
  }

  /** The request ended (or the attempt was committed): no timer or listener outlives it. */
  dispose(): void {
    clearTimeout(this.timer);
    this.requestSignal.removeEventListener('abort', this.follow);
  }

  private readonly follow = (): void => {
    this.controller.abort(this.requestSignal.reason);
  };
}

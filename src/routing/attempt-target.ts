import { fallbackReason } from '../errors/fallback-policy.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { AttemptLog } from './attempts.ts';
import type { HealthBook } from './health.ts';
import type { Candidate } from './plan.ts';
import { retryAfterMs } from './retry-after.ts';

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

/** One try of one candidate: its own abort (a TTFT timeout) under the request's. */
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
  /** The TTFT timer fired (the attempt's own abort may also be its abandonment after a failure). */
  private expired = false;

  /** `last`: no candidate follows, so a TTFT timeout would only fail a request that may still be answered. */
  constructor(candidate: Candidate, ctx: AttemptContext, last: boolean) {
    this.candidate = candidate;
    this.signal = AbortSignal.any([ctx.signal, this.controller.signal]);
    ctx.health.begin(candidate.key);
    this.traceHeaders = ctx.log.began(candidate);
    if (candidate.ttftTimeoutMs > 0 && !last) {
      this.timer = setTimeout(() => {
        this.expired = true;
        this.controller.abort(ttftTimeout(candidate));
      }, candidate.ttftTimeoutMs);
    }
  }

  get timedOut(): boolean {
    return this.expired;
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
    const cause = ctx.signal.aborted ? null : timedOut ? 'ttft_timeout' : fallbackReason(error);
    const reason = hasNext ? cause : null;
    if (cause !== null) {
      ctx.health.failed(this.candidate.key, error.code);
      const wait = error.status === 429 ? retryAfterMs(error.headers) : null;
      if (wait !== null) ctx.health.coolDown(this.candidate.key, wait);
    }
    ctx.log.failed(this.candidate, error, this.acknowledged, reason, Date.now() - this.startedAt);
    this.controller.abort(error);
    return reason;
  }

  /** The request ended (or the attempt was committed): no timer outlives it. */
  dispose(): void {
    clearTimeout(this.timer);
  }
}

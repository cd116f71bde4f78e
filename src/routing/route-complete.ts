import { type GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import type { CanonicalEvent, FallbackEvent } from '../protocol/canonical/events.ts';
import { type AttemptContext, TargetAttempt, wholeAnswerLimit } from './attempt-target.ts';
import type { Candidate } from './plan.ts';

/** The non-streaming call of one candidate (the adapter's `complete`, with the target's params and the attempt's trace headers). */
export type CompleteOnce = (
  candidate: Candidate,
  signal: AbortSignal,
  traceHeaders: Record<string, string> | undefined,
) => Promise<CanonicalEvent[]>;

/**
 * A non-streamed request over a route: the candidates in order until one answers, falling back on
 * what the fallback policy allows (a refusal, or an error in the answer); a bad request is
 * returned at once. Resolves to the answer's events, led by a `fallback` event per switch, or
 * rejects with the last failure. The TTFT timeout is a stream setting: a whole answer is
 * bounded by the target's timeout_s (then the next target is tried) and the request's deadline.
 */
export async function routedComplete(
  ctx: AttemptContext,
  complete: CompleteOnce,
  onFallback: (event: FallbackEvent) => void,
): Promise<CanonicalEvent[]> {
  const { value, switches } = await routedCall(ctx, complete, onFallback, (events) => {
    const error = events.find((e) => e.type === 'error');
    return error?.type === 'error' ? error.error : null;
  });
  return [...switches, ...value];
}

/**
 * routedComplete over any answer (a relayed body as it came): `failureOf` finds the error an
 * answer reports, if any. Resolves to the answer and the switches made, or rejects with the last
 * failure; an answer whose error is not fallen back from is returned as it is, as it would unrouted.
 */
export async function routedCall<T>(
  ctx: AttemptContext,
  call: (candidate: Candidate, signal: AbortSignal, traceHeaders: Record<string, string> | undefined) => Promise<T>,
  onFallback: (event: FallbackEvent) => void,
  failureOf: (value: T) => GatewayError | null,
): Promise<{ value: T; switches: FallbackEvent[] }> {
  const switches: FallbackEvent[] = [];
  for (let index = 0; ; index++) {
    const candidate = ctx.candidates[index];
    const hasNext = index + 1 < ctx.candidates.length;
    const attempt = new TargetAttempt(candidate, ctx, !hasNext, wholeAnswerLimit(candidate));
    let failure: GatewayError;
    let answered: { value: T } | undefined;
    try {
      const value = await call(candidate, attempt.signal, attempt.traceHeaders);
      attempt.acknowledged = true;
      const error = failureOf(value);
      if (!error) {
        attempt.succeeded(ctx);
        return { value, switches };
      }
      answered = { value };
      failure = error;
    } catch (err) {
      failure = toGatewayError(ctx.signal.aborted ? ctx.signal.reason : (attempt.timeoutError ?? err));
    }
    const reason = attempt.failed(failure, ctx, hasNext);
    if (reason === null) {
      // The answer's own error stays in it, as it would unrouted.
      if (answered) return { value: answered.value, switches };
      throw failure;
    }
    const to = ctx.candidates[index + 1].target;
    const event: FallbackEvent = {
      type: 'fallback',
      from: { provider: candidate.target.provider, model: candidate.target.model },
      to: { provider: to.provider, model: to.model },
      reason,
    };
    switches.push(event);
    onFallback(event);
  }
}

import type { GatewayError } from '../errors/gateway-error.ts';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import { callOnce } from './call-once.ts';
import type { RunScope } from './model-operation.ts';
import { capOutput } from './output-cap.ts';
import { completeRouted } from './routed-calls.ts';

/** A non-streamed answer's events, given the request as sent (its output capped to the budget). */
export type CompleteCall = (sent: CanonicalRequest) => (signal: AbortSignal) => Promise<CanonicalEvent[]>;

/**
 * The provider's non-streaming call, observed by the accountant. Resolves to the events, or to
 * the failure (an error event in the response counts), whose HTTP error has then been sent.
 * Every surface's non-streamed answer over canonical events starts here, a cached one too; `call`
 * is the routed call unless the answer is more than one (the MCP tool loop's steps:
 * src/mcp/run-tool-loop.ts).
 */
export async function completeEvents(
  run: RunScope,
  request: CanonicalRequest,
  call: CompleteCall = (sent) => completeRouted(run, sent),
): Promise<{ events: CanonicalEvent[] } | { failure: GatewayError }> {
  const { exchange, accountant } = run;
  const { answer, keep } = run.cache;
  // A cache hit is answered by the same encoders as a live answer.
  const outcome = answer
    ? { ok: true as const, value: [...answer] }
    : await callOnce(exchange, run.scope, call(capOutput(request, run.admission.maxOutputTokens)));
  if (!outcome.ok) return { failure: outcome.failure };
  keep?.(outcome.value);
  accountant.markAcknowledged();
  for (const event of outcome.value) accountant.observe(event);
  const failure = outcome.value.find((e) => e.type === 'error')?.error;
  if (failure) {
    exchange.sendError(failure);
    return { failure };
  }
  return { events: outcome.value };
}

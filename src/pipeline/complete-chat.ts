import type { GatewayError } from '../errors/gateway-error.ts';
import { assemble } from '../protocol/canonical/assemble.ts';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import { encodeCompletion } from '../protocol/openai-chat/encode-completion.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import { callOnce } from './call-once.ts';
import type { RunScope } from './model-operation.ts';
import { completeRouted } from './routed-calls.ts';
import { capOutput } from './output-cap.ts';

/**
 * The provider's non-streaming call, observed by the accountant. Resolves to the events, or to
 * the failure (an error event in the response counts), whose HTTP error has then been sent.
 */
export async function completeEvents(
  run: RunScope,
  request: CanonicalRequest,
): Promise<{ events: CanonicalEvent[] } | { failure: GatewayError }> {
  const { exchange, accountant } = run;
  const sent = capOutput(request, run.admission.maxOutputTokens);
  const outcome = await callOnce(exchange, run.scope, completeRouted(run, sent));
  if (!outcome.ok) return { failure: outcome.failure };
  accountant.markAcknowledged();
  for (const event of outcome.value) accountant.observe(event);
  const failure = outcome.value.find((e) => e.type === 'error')?.error;
  if (failure) {
    exchange.sendError(failure);
    return { failure };
  }
  return { events: outcome.value };
}

/** POST /v1/chat/completions without `stream`: the same canonical events, folded into one object. */
export async function completeChat(run: RunScope, request: CanonicalRequest): Promise<GatewayError | null> {
  const result = await completeEvents(run, request);
  if ('failure' in result) return result.failure;
  const message = assemble(result.events);
  // A response without usage gets sluice's own count, like a stream does.
  message.usage = await run.accountant.usage(run.scope.signal);
  const body = encodeCompletion(message, {
    id: `chatcmpl-${run.exchange.requestId}`,
    created: Math.floor(run.accountant.startedAt / 1000),
    model: run.target.requested,
  });
  run.exchange.sendJson(200, body);
  return null;
}

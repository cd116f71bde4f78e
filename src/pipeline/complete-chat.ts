import type { ServerResponse } from 'node:http';
import type { Accountant } from '../accounting/accountant.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import { assemble } from '../protocol/canonical/assemble.ts';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import { encodeCompletion } from '../protocol/openai-chat/encode-completion.ts';
import type { ChatRequest } from '../protocol/openai-chat/request-schema.ts';
import type { ResolvedModel } from '../providers/registry.ts';
import { sendError, sendJson } from '../server/http-io.ts';
import { type CallScope, callOnce } from './call-once.ts';

/**
 * The provider's non-streaming call, observed by the accountant. Resolves to the events, or to
 * the failure (an error event in the response counts), whose HTTP error has then been sent.
 */
export async function completeEvents(
  res: ServerResponse,
  request: ChatRequest,
  target: ResolvedModel,
  scope: CallScope,
  accountant: Accountant,
): Promise<{ events: CanonicalEvent[] } | { failure: GatewayError }> {
  const { requestId } = scope;
  const outcome = await callOnce(res, scope, (signal) => target.adapter.complete(request, target.model, { signal, requestId }));
  if (!outcome.ok) return { failure: outcome.failure };
  accountant.markAcknowledged();
  for (const event of outcome.value) accountant.observe(event);
  const failure = outcome.value.find((e) => e.type === 'error')?.error;
  if (failure) {
    sendError(res, failure, requestId);
    return { failure };
  }
  return { events: outcome.value };
}

export interface CompleteChatOptions extends CallScope {
  created: number;
  accountant: Accountant;
}

/** POST /v1/chat/completions without `stream`: the same canonical events, folded into one object. */
export async function completeChat(
  res: ServerResponse,
  request: ChatRequest,
  target: ResolvedModel,
  options: CompleteChatOptions,
): Promise<GatewayError | null> {
  const result = await completeEvents(res, request, target, options, options.accountant);
  if ('failure' in result) return result.failure;
  const message = assemble(result.events);
  // A response without usage gets sluice's own count, like a stream does.
  message.usage = await options.accountant.usage();
  const body = encodeCompletion(message, { id: `chatcmpl-${options.requestId}`, created: options.created, model: target.requested });
  sendJson(res, 200, body, { 'X-Request-ID': options.requestId });
  return null;
}

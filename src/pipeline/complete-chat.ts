import type { ServerResponse } from 'node:http';
import type { Accountant } from '../accounting/accountant.ts';
import { type GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import { assemble } from '../protocol/canonical/assemble.ts';
import { encodeCompletion } from '../protocol/openai-chat/encode-completion.ts';
import type { ChatRequest } from '../protocol/openai-chat/request-schema.ts';
import { StreamSession } from '../protocol/sse/stream-session.ts';
import type { ResolvedModel } from '../providers/registry.ts';
import { sendError, sendJson } from '../server/http-io.ts';

export interface CompleteChatOptions {
  requestId: string;
  created: number;
  deadlineMs: number;
  accountant: Accountant;
}

/** The non-streaming call: same provider, same canonical events, folded into one object. */
export async function completeChat(
  res: ServerResponse,
  request: ChatRequest,
  target: ResolvedModel,
  options: CompleteChatOptions,
): Promise<GatewayError | null> {
  const { accountant } = options;
  // The session gives the deadline and the abort-on-disconnect; it never writes SSE here.
  const scope = new StreamSession(res, {
    requestId: options.requestId,
    heartbeatMs: 0,
    idleTimeoutMs: 0,
    deadlineMs: options.deadlineMs,
  });
  let failure: GatewayError | null = null;
  try {
    const events = await target.adapter.complete(request, target.model, {
      signal: scope.signal,
      requestId: options.requestId,
    });
    accountant.markAcknowledged();
    for (const event of events) accountant.observe(event);
    const message = assemble(events);
    failure = message.error;
    if (!failure) {
      // A response without usage gets sluice's own count, like a stream does.
      message.usage = await accountant.usage();
      const body = encodeCompletion(message, {
        id: `chatcmpl-${options.requestId}`,
        created: options.created,
        model: target.requested,
      });
      sendJson(res, 200, body, { 'X-Request-ID': options.requestId });
    }
  } catch (err) {
    failure = toGatewayError(scope.signal.aborted ? scope.signal.reason : err);
  } finally {
    scope.dispose();
  }
  if (failure) sendError(res, failure, options.requestId);
  return failure;
}

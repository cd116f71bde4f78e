import type { GatewayError } from '../../errors/gateway-error.ts';
import { assemble } from '../../protocol/canonical/assemble.ts';
import { encodeCompletion } from './encode-response.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import { type CompleteCall, completeEvents } from '../../pipeline/complete-events.ts';
import { chatMcpSummary } from './mcp-calls.ts';
import type { RunScope } from '../../pipeline/model-operation.ts';

/**
 * POST /v1/chat/completions without `stream`: the same canonical events, folded into one object;
 * `call`: the MCP tool loop's steps (the calls it ran are the body's `sluice.mcp_calls`).
 */
export async function completeChat(run: RunScope, request: CanonicalRequest, call?: CompleteCall): Promise<GatewayError | null> {
  const result = await completeEvents(run, request, call);
  if ('failure' in result) return result.failure;
  const message = assemble(result.events);
  // A response without usage gets sluice's own count, like a stream does.
  message.usage = await run.accountant.usage(run.scope.signal);
  const body = encodeCompletion(message, {
    id: `chatcmpl-${run.exchange.requestId}`,
    created: Math.floor(run.accountant.startedAt / 1000),
    model: run.target.requested,
  });
  const sluice = chatMcpSummary(result.events);
  run.exchange.sendJson(200, sluice ? { ...body, sluice } : body);
  return null;
}

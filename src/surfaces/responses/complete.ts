import type { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import { type CompleteCall, completeEvents } from '../../pipeline/complete-events.ts';
import type { RunScope } from '../../pipeline/model-operation.ts';
import { buildResponse } from './encode-response.ts';
import { ResponsesEventEncoder } from './encode-stream.ts';
import type { ResponsesRequest } from './request-schema.ts';
import { responseIdentity, type RunResponsesOptions } from './run-options.ts';
import { saveResponse } from './save-response.ts';

/** POST /v1/responses without `stream` over canonical events: the events folded into one response (`call`: the MCP tool loop's steps). */
export async function completeResponse(
  run: RunScope,
  request: ResponsesRequest,
  chat: CanonicalRequest,
  options: RunResponsesOptions,
  call?: CompleteCall,
): Promise<GatewayError | null> {
  const result = await completeEvents(run, chat, call);
  if ('failure' in result) return result.failure;
  const identity = responseIdentity(run, request, options);
  const encoder = new ResponsesEventEncoder(identity, options.choices);
  for (const event of result.events) encoder.encode(event);
  // A response without usage gets sluice's own count, like a stream does.
  const response = buildResponse(identity, encoder.state(await run.accountant.usage(run.scope.signal)));
  run.exchange.sendJson(200, response);
  saveResponse(run, options, identity, chat, response);
  return null;
}

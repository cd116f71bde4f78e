import type { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import { completeEvents } from '../../pipeline/complete-events.ts';
import type { RunScope } from '../../pipeline/model-operation.ts';
import { messageEncoder } from './run-options.ts';

/** POST /v1/messages without `stream` over canonical events: the events folded into one message. */
export async function completeMessages(run: RunScope, request: CanonicalRequest): Promise<GatewayError | null> {
  const result = await completeEvents(run, request);
  if ('failure' in result) return result.failure;
  const encoder = messageEncoder(run);
  for (const event of result.events) encoder.encode(event);
  // A response without usage gets sluice's own count, like a stream does.
  run.exchange.sendJson(200, encoder.message(await run.accountant.usage(run.scope.signal)));
  return null;
}

import type { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import type { RunScope } from '../../pipeline/model-operation.ts';
import { openRouted } from '../../pipeline/routed-calls.ts';
import { runStream } from '../../pipeline/run-stream.ts';
import { buildResponse } from './encode-response.ts';
import { ResponsesEventEncoder } from './encode-stream.ts';
import type { ResponsesRequest } from './request-schema.ts';
import { responseIdentity, type RunResponsesOptions, streamOptions } from './run-options.ts';
import { saveResponse } from './save-response.ts';
import { ResponsesStreamSurface } from './stream-surface.ts';

/**
 * POST /v1/responses with `stream: true` over canonical events: any provider but a relayed one.
 * `open`: the MCP tool loop's, over several model calls.
 */
export async function streamResponse(
  run: RunScope,
  request: ResponsesRequest,
  chat: CanonicalRequest,
  options: RunResponsesOptions,
  open = openRouted(run, chat),
): Promise<GatewayError | null> {
  const identity = responseIdentity(run, request, options);
  const encoder = new ResponsesEventEncoder(identity, options.choices);
  const failure = await runStream(
    run.exchange,
    run.scope,
    open,
    new ResponsesStreamSurface(encoder, run.accountant),
    streamOptions(run, options),
  );
  if (!failure) {
    const response = buildResponse(identity, encoder.state(await run.accountant.usage(run.scope.signal)));
    saveResponse(run, options, identity, chat, response);
  }
  return failure;
}

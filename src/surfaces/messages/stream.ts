import type { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import type { RunScope } from '../../pipeline/model-operation.ts';
import { openRouted } from '../../pipeline/routed-calls.ts';
import { runStream } from '../../pipeline/run-stream.ts';
import { messageEncoder, type RunMessagesOptions, streamOptions } from './run-options.ts';
import { MessagesStreamSurface } from './stream-surface.ts';

/** POST /v1/messages with `stream: true` over canonical events: any provider but a relayed one. */
export function streamMessages(
  run: RunScope,
  request: CanonicalRequest,
  options: RunMessagesOptions,
): Promise<GatewayError | null> {
  return runStream(
    run.exchange,
    run.scope,
    // Over the request's candidates, as chat streams are: a route falls back before the first output.
    openRouted(run, request),
    new MessagesStreamSurface(messageEncoder(run), run.accountant),
    streamOptions(run, options),
  );
}

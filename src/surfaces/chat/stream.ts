import type { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import type { ChatStreamChoices } from '../../protocol/stream-profiles.ts';
import { ChatStreamSurface } from './stream-surface.ts';
import type { RunScope } from '../../pipeline/model-operation.ts';
import { openRouted } from '../../pipeline/routed-calls.ts';
import { runStream, type StreamTimings } from '../../pipeline/run-stream.ts';

export interface StreamChatOptions {
  timings: StreamTimings;
  includeUsage: boolean;
  usageExtensions: boolean;
  /** The stream profile's choices (protocol/stream-profiles.ts). */
  choices: ChatStreamChoices;
}

/** POST /v1/chat/completions with `stream: true`; `open`: the MCP tool loop's, over several model calls. */
export function streamChat(
  run: RunScope,
  request: CanonicalRequest,
  options: StreamChatOptions,
  open = openRouted(run, request),
): Promise<GatewayError | null> {
  const { exchange, accountant, target } = run;
  const requestId = exchange.requestId;
  const surface = new ChatStreamSurface(
    {
      id: `chatcmpl-${requestId}`,
      created: Math.floor(accountant.startedAt / 1000),
      model: target.requested,
      provider: target.provider,
      includeUsage: options.includeUsage,
      usageExtensions: options.usageExtensions,
      stream: options.choices,
    },
    accountant,
    { requestId, provider: target.provider, model: target.model },
    run.admission.warning,
    (provider) => run.candidates.some((c) => c.target.provider === provider && c.target.adapter.reportsInputFirst === true),
  );
  return runStream(exchange, run.scope, open, surface, {
    provider: target.provider,
    timings: options.timings,
    onAcknowledged: () => accountant.markAcknowledged(),
    // The accounting reference's upstream failures come in the stream ("Provider returned 502 Bad Gateway").
    upstreamFailureInStream: options.choices.upstreamFailure === 'frame',
  });
}

import type { GatewayError } from '../errors/gateway-error.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import { ChatStreamSurface } from './chat-surface.ts';
import type { RunScope } from './model-operation.ts';
import { openRouted } from './routed-calls.ts';
import { runStream, type StreamTimings } from './run-stream.ts';

export interface StreamChatOptions {
  timings: StreamTimings;
  includeUsage: boolean;
  errorStyle: 'data' | 'event';
  profile: 'openai' | 'accounting';
  usageExtensions: boolean;
  vendorEvents: 'drop' | 'passthrough';
}

/** POST /v1/chat/completions with `stream: true`. */
export function streamChat(run: RunScope, request: CanonicalRequest, options: StreamChatOptions): Promise<GatewayError | null> {
  const { exchange, accountant, target } = run;
  const requestId = exchange.requestId;
  const surface = new ChatStreamSurface(
    {
      id: `chatcmpl-${requestId}`,
      created: Math.floor(accountant.startedAt / 1000),
      model: target.requested,
      includeUsage: options.includeUsage,
      errorStyle: options.errorStyle,
      profile: options.profile,
      provider: target.provider,
      usageExtensions: options.usageExtensions,
      vendorEvents: options.vendorEvents,
    },
    accountant,
    { requestId, provider: target.provider, model: target.model },
    run.admission.warning,
    (provider) => run.candidates.some((c) => c.target.provider === provider && c.target.adapter.reportsInputFirst === true),
  );
  return runStream(exchange, run.scope, openRouted(run, request), surface, {
    provider: target.provider,
    timings: options.timings,
    onAcknowledged: () => accountant.markAcknowledged(),
  });
}

import type { ServerResponse } from 'node:http';
import type { Accountant } from '../accounting/accountant.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { ChatRequest } from '../protocol/openai-chat/request-schema.ts';
import type { StreamSession, StreamTimings } from '../protocol/sse/stream-session.ts';
import type { ResolvedModel } from '../providers/registry.ts';
import { ChatStreamSurface } from './chat-surface.ts';
import { runStream } from './run-stream.ts';

export interface StreamChatOptions {
  requestId: string;
  created: number;
  timings: StreamTimings;
  includeUsage: boolean;
  errorStyle: 'data' | 'event';
  profile: 'openai' | 'accounting';
  usageExtensions: boolean;
  accountant: Accountant;
  sessions: Set<StreamSession>;
}

/** POST /v1/chat/completions with `stream: true`. */
export function streamChat(
  res: ServerResponse,
  request: ChatRequest,
  target: ResolvedModel,
  options: StreamChatOptions,
): Promise<GatewayError | null> {
  const { accountant, requestId } = options;
  const surface = new ChatStreamSurface(
    {
      id: `chatcmpl-${requestId}`,
      created: options.created,
      model: target.requested,
      includeUsage: options.includeUsage,
      errorStyle: options.errorStyle,
      profile: options.profile,
      provider: target.provider,
      usageExtensions: options.usageExtensions,
    },
    accountant,
    { requestId, provider: target.provider, model: target.model },
  );
  return runStream(res, (signal) => target.adapter.stream(request, target.model, { signal, requestId }), surface, {
    requestId,
    provider: target.provider,
    timings: options.timings,
    sessions: options.sessions,
    onAcknowledged: () => accountant.markAcknowledged(),
  });
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import { completeChat } from '../../pipeline/complete-chat.ts';
import { type StreamOutcome, streamChat } from '../../pipeline/stream-chat.ts';
import { parseChatRequest } from '../../protocol/openai-chat/parse-request.ts';
import { readJsonBody } from '../http-io.ts';
import type { GatewayContext } from '../gateway-context.ts';

export async function handleChatCompletions(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: GatewayContext,
  requestId: string,
): Promise<StreamOutcome> {
  const request = parseChatRequest(await readJsonBody(req, ctx.config.server.body_limit_bytes));
  const target = ctx.registry.resolve(request.model);
  const created = Math.floor(Date.now() / 1000);
  const stream = ctx.config.stream;
  if (!request.stream) {
    return completeChat(res, request, target, { requestId, created, deadlineMs: stream.deadline_s * 1000 });
  }
  return streamChat(res, request, target, {
    requestId,
    created,
    timings: {
      heartbeatMs: stream.heartbeat_s * 1000,
      idleTimeoutMs: stream.idle_timeout_s * 1000,
      deadlineMs: stream.deadline_s * 1000,
    },
    includeUsage: stream.usage === 'always' || request.stream_options?.include_usage === true,
    errorStyle: stream.error_style,
    sessions: ctx.sessions,
  });
}

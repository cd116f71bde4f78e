import type { IncomingMessage, ServerResponse } from 'node:http';
import { rejectedRecord } from '../../accounting/accountant.ts';
import { toGatewayError } from '../../errors/gateway-error.ts';
import { completeChat } from '../../pipeline/complete-chat.ts';
import { createAccountant, recordOutcome } from '../../pipeline/request-accounting.ts';
import { streamChat } from '../../pipeline/stream-chat.ts';
import { parseChatRequest } from '../../protocol/openai-chat/parse-request.ts';
import type { ChatRequest } from '../../protocol/openai-chat/request-schema.ts';
import type { ResolvedModel } from '../../providers/registry.ts';
import type { GatewayContext } from '../gateway-context.ts';
import { readJsonBody } from '../http-io.ts';

export async function handleChatCompletions(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: GatewayContext,
  requestId: string,
): Promise<void> {
  const startedAt = Date.now();
  let request: ChatRequest | undefined;
  let target: ResolvedModel;
  try {
    request = parseChatRequest(await readJsonBody(req, ctx.config.server.body_limit_bytes));
    target = ctx.registry.resolve(request.model);
  } catch (err) {
    // Refused before any provider: still one ledger row, then the HTTP error from the caller.
    const error = toGatewayError(err);
    ctx.accounting.ledger?.write(rejectedRecord(requestId, error, 'chat', request?.model ?? '', startedAt));
    throw error;
  }
  const created = Math.floor(startedAt / 1000);
  const stream = ctx.config.stream;
  const streamed = request.stream === true;
  const accountant = createAccountant(ctx.accounting, requestId, request, target, 'chat', streamed);
  const failure = !streamed
    ? await completeChat(res, request, target, {
        requestId,
        created,
        deadlineMs: stream.deadline_s * 1000,
        sessions: ctx.sessions,
        accountant,
      })
    : await streamChat(res, request, target, {
        requestId,
        created,
        timings: {
          heartbeatMs: stream.heartbeat_s * 1000,
          idleTimeoutMs: stream.idle_timeout_s * 1000,
          deadlineMs: stream.deadline_s * 1000,
        },
        includeUsage: stream.usage === 'always' || request.stream_options?.include_usage === true,
        errorStyle: stream.error_style,
        profile: profileOf(req, stream.profile),
        usageExtensions: stream.usage_extensions,
        accountant,
        sessions: ctx.sessions,
      });
  await recordOutcome(ctx.accounting, accountant, failure);
}

/** `X-Sluice-Profile: accounting` chooses the profile per request; else the config's. */
function profileOf(req: IncomingMessage, fallback: 'openai' | 'accounting'): 'openai' | 'accounting' {
  const header = req.headers['x-sluice-profile'];
  if (header === 'accounting' || header === 'openai') return header;
  return fallback;
}

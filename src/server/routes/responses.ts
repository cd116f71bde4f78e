import type { IncomingMessage, ServerResponse } from 'node:http';
import { rejectedRecord } from '../../accounting/accountant.ts';
import { errors } from '../../errors/catalog.ts';
import { toGatewayError } from '../../errors/gateway-error.ts';
import { createAccountant, recordOutcome } from '../../pipeline/request-accounting.ts';
import { relayResponses, runResponses } from '../../pipeline/run-responses.ts';
import type { ChatMessage } from '../../protocol/openai-chat/request-schema.ts';
import { parseResponsesRequest } from '../../protocol/openai-responses/parse-request.ts';
import { toChatRequest } from '../../protocol/openai-responses/to-chat-request.ts';
import type { GatewayContext } from '../gateway-context.ts';
import { readJsonBody, sendJson } from '../http-io.ts';

/** POST /v1/responses */
export async function handleCreateResponse(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: GatewayContext,
  requestId: string,
): Promise<void> {
  const startedAt = Date.now();
  let model = '';
  const reject = (err: unknown): never => {
    const error = toGatewayError(err);
    ctx.accounting.ledger?.write(rejectedRecord(requestId, error, 'responses', model, startedAt));
    throw error;
  };
  const body = (await readJsonBody(req, ctx.config.server.body_limit_bytes).catch(reject)) as Record<string, unknown>;
  model = typeof body?.model === 'string' ? body.model : '';
  const target = (() => {
    try {
      return ctx.registry.resolve(model || parseResponsesRequest(body).model);
    } catch (err) {
      return reject(err);
    }
  })();
  const options = {
    requestId,
    timings: {
      heartbeatMs: ctx.config.stream.heartbeat_s * 1000,
      idleTimeoutMs: ctx.config.stream.idle_timeout_s * 1000,
      deadlineMs: ctx.config.responses.deadline_s * 1000,
    },
    sessions: ctx.sessions,
    log: ctx.accounting.log,
  };

  // An upstream with its own Responses API gets the body as sent (hosted tools included).
  const relay = target.adapter.responses;
  if (relay) {
    if (!Array.isArray(body.input) && typeof body.input !== 'string') {
      reject(errors.invalidRequest("Missing required parameter: 'input'.", 'input'));
    }
    const chatView = { model, messages: [{ role: 'user' as const, content: JSON.stringify(body.input) }] };
    const accountant = createAccountant(ctx.accounting, requestId, chatView, target, 'responses', body.stream === true);
    const store = body.store === false ? undefined : ctx.responsesStore;
    const failure = await relayResponses(res, body, relay, target, { ...options, accountant, store });
    await recordOutcome(ctx.accounting, accountant, failure);
    return;
  }

  let request: ReturnType<typeof parseResponsesRequest>;
  let history: ChatMessage[] = [];
  try {
    request = parseResponsesRequest(body);
    if (request.previous_response_id) history = await loadHistory(ctx, request.previous_response_id);
  } catch (err) {
    return reject(err);
  }
  const chat = toChatRequest(request, history);
  const accountant = createAccountant(ctx.accounting, requestId, chat, target, 'responses', request.stream === true);
  const store = request.store === false ? undefined : ctx.responsesStore;
  const failure = await runResponses(res, request, chat, target, { ...options, accountant, store });
  await recordOutcome(ctx.accounting, accountant, failure);
}

async function loadHistory(ctx: GatewayContext, id: string): Promise<ChatMessage[]> {
  const stored = await ctx.responsesStore?.get(id);
  if (!stored) throw errors.responseNotFound(id, 'previous_response_id');
  return stored.conversation;
}

/** GET /v1/responses/{id}: a response created (or relayed) through sluice and stored. */
export async function handleGetResponse(res: ServerResponse, ctx: GatewayContext, id: string, requestId: string) {
  const stored = await ctx.responsesStore?.get(id);
  if (!stored) throw errors.responseNotFound(id);
  sendJson(res, 200, stored.response, { 'X-Request-ID': requestId });
}

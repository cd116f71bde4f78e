import type { ServerResponse } from 'node:http';
import type { Accountant } from '../accounting/accountant.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { ChatRequest } from '../protocol/openai-chat/request-schema.ts';
import { ResponsesEventEncoder } from '../protocol/openai-responses/encode-events.ts';
import type { ResponsesInputItem, ResponsesRequest } from '../protocol/openai-responses/request-schema.ts';
import { buildResponse, type ResponseIdentity } from '../protocol/openai-responses/response-object.ts';
import { itemsToMessages } from '../protocol/openai-responses/to-chat-request.ts';
import type { StreamSession, StreamTimings } from '../protocol/sse/stream-session.ts';
import type { ResolvedModel } from '../providers/registry.ts';
import type { ResponsesRelay } from '../providers/types.ts';
import { sendJson } from '../server/http-io.ts';
import type { ResponsesStore } from '../store/responses-store.ts';
import { callOnce } from './call-once.ts';
import { completeEvents } from './complete-chat.ts';
import { fromResponsesUsage, RelayStreamSurface } from './relay-surface.ts';
import { ResponsesStreamSurface } from './responses-surface.ts';
import { type RunStreamOptions, runStream } from './run-stream.ts';

export interface RunResponsesOptions {
  requestId: string;
  timings: StreamTimings;
  accountant: Accountant;
  sessions: Set<StreamSession>;
  /** Where finished responses go (absent: the store is off, or the request said store: false). */
  store: ResponsesStore | undefined;
  log: (message: string) => void;
}

/** How every Responses stream runs, relayed or built here. */
function streamOptions(options: RunResponsesOptions, target: ResolvedModel): RunStreamOptions {
  return {
    requestId: options.requestId,
    provider: target.provider,
    timings: options.timings,
    contentType: 'text/event-stream; charset=utf-8',
    sessions: options.sessions,
    onAcknowledged: () => options.accountant.markAcknowledged(),
  };
}

/** POST /v1/responses over canonical events: any provider, stream or not. */
export async function runResponses(
  res: ServerResponse,
  request: ResponsesRequest,
  chat: ChatRequest,
  target: ResolvedModel,
  options: RunResponsesOptions,
): Promise<GatewayError | null> {
  const { accountant, requestId } = options;
  const identity: ResponseIdentity = {
    id: `resp_${requestId}`,
    createdAt: Math.floor(accountant.startedAt / 1000),
    model: target.requested,
    request,
  };
  const encoder = new ResponsesEventEncoder(identity);
  let failure: GatewayError | null;
  if (request.stream) {
    failure = await runStream(
      res,
      (signal) => target.adapter.stream(chat, target.model, { signal, requestId }),
      new ResponsesStreamSurface(encoder, accountant),
      streamOptions(options, target),
    );
  } else {
    const scope = { requestId, deadlineMs: options.timings.deadlineMs, sessions: options.sessions };
    const result = await completeEvents(res, chat, target, scope, accountant);
    failure = 'failure' in result ? result.failure : null;
    if ('events' in result) for (const e of result.events) encoder.encode(e);
  }
  if (!failure || !request.stream) {
    const usage = failure ? accountant.reportedUsage : await accountant.usage();
    const response = buildResponse(identity, encoder.state(usage));
    if (!failure && !request.stream) sendJson(res, 200, response, { 'X-Request-ID': requestId });
    if (!failure) save(options, identity, chat, response);
  }
  return failure;
}

/** Keeps the conversation (history, this input, this output) for previous_response_id. */
function save(
  options: RunResponsesOptions,
  identity: ResponseIdentity,
  chat: ChatRequest,
  response: Record<string, unknown>,
): void {
  if (!options.store) return;
  // The instructions message (if any) is per-response and is not part of the conversation.
  const turn = chat.messages.slice(identity.request.instructions ? 1 : 0);
  const output = itemsToMessages(response.output as ResponsesInputItem[]);
  options.store
    .save({ id: identity.id, createdAt: identity.createdAt, model: identity.model, conversation: [...turn, ...output], response })
    .catch((err: Error) => options.log(`responses store: could not save ${identity.id}: ${err.message}`));
}

/** POST /v1/responses relayed to an upstream that speaks it (events exactly as sent). */
export async function relayResponses(
  res: ServerResponse,
  body: Record<string, unknown>,
  relay: ResponsesRelay,
  target: ResolvedModel,
  options: RunResponsesOptions,
): Promise<GatewayError | null> {
  const { accountant, requestId } = options;
  if (body.stream === true) {
    const surface = new RelayStreamSurface(accountant, target.provider);
    const failure = await runStream(
      res,
      (signal) => relay.stream(body, target.model, { signal, requestId }),
      surface,
      streamOptions(options, target),
    );
    if (!failure && surface.finalResponse) saveRelayed(options, surface.finalResponse);
    return failure;
  }
  const scope = { requestId, deadlineMs: options.timings.deadlineMs, sessions: options.sessions };
  const outcome = await callOnce(res, scope, (signal) =>
    relay.complete(body, target.model, { signal, requestId }),
  );
  if (!outcome.ok) return outcome.failure;
  const response = outcome.value;
  accountant.markAcknowledged();
  const usage = response.usage as Parameters<typeof fromResponsesUsage>[0] | undefined;
  if (usage) accountant.observe({ type: 'usage', usage: fromResponsesUsage(usage) });
  sendJson(res, 200, response, { 'X-Request-ID': requestId });
  saveRelayed(options, response);
  return null;
}

/** A relayed response is kept for GET only; its continuation is the upstream's business. */
function saveRelayed(options: RunResponsesOptions, response: Record<string, unknown>): void {
  if (!options.store || typeof response.id !== 'string') return;
  options.store
    .save({
      id: response.id,
      createdAt: Number(response.created_at ?? 0),
      model: String(response.model ?? ''),
      conversation: [],
      response,
    })
    .catch((err: Error) => options.log(`responses store: could not save ${String(response.id)}: ${err.message}`));
}

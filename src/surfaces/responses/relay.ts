import type { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import { ResponsesEventEncoder } from './encode-stream.ts';
import type { ResponsesStreamChoices } from '../../protocol/stream-profiles.ts';
import type { ResponsesInputItem, ResponsesRequest } from './request-schema.ts';
import { buildResponse, type ResponseIdentity } from './encode-response.ts';
import { returnedIds } from './stored-ids.ts';
import { itemsToMessages } from './to-canonical.ts';
import { responsesRelayReading } from './relay-reading.ts';
import { relayedBodyFor } from '../../routing/relayed-body.ts';
import type { ResponsesStore } from '../../store/responses-store.ts';
import { completeEvents } from '../../pipeline/complete-events.ts';
import type { RunScope } from '../../pipeline/model-operation.ts';
import { openRouted, routedRelay } from '../../pipeline/routed-calls.ts';
import { capRelayedOutput } from '../../pipeline/output-cap.ts';
import { wholeResponseEvents } from './relay-output.ts';
import { fromResponsesUsage, RelayStreamSurface } from './relay-surface.ts';
import { ResponsesStreamSurface } from './stream-surface.ts';
import type { RunStreamOptions, StreamTimings } from '../../pipeline/run-stream.ts';
import { runStream } from '../../pipeline/run-stream.ts';

export interface RunResponsesOptions {
  timings: StreamTimings;
  /** Where finished responses go (absent: the store is off, or the request said store: false). */
  store: ResponsesStore | undefined;
  /** Records the ids a relayed upstream handed out as the caller's project's (absent: no store, or no project). */
  recordIds?: (ids: readonly string[]) => void;
  /** The stream profile's choices for a stream sluice builds (a relayed one is the upstream's, as sent). */
  choices: ResponsesStreamChoices;
}

/** How every Responses stream runs, relayed or built here. */
function streamOptions(run: RunScope, options: RunResponsesOptions): RunStreamOptions {
  return {
    provider: run.target.provider,
    timings: options.timings,
    contentType: 'text/event-stream; charset=utf-8',
    onAcknowledged: () => run.accountant.markAcknowledged(),
  };
}

/** POST /v1/responses over canonical events: any provider, stream or not. */
export async function runResponses(
  run: RunScope,
  request: ResponsesRequest,
  chat: CanonicalRequest,
  options: RunResponsesOptions,
): Promise<GatewayError | null> {
  const { accountant, exchange, target } = run;
  const requestId = exchange.requestId;
  const identity: ResponseIdentity = {
    id: `resp_${requestId}`,
    createdAt: Math.floor(accountant.startedAt / 1000),
    model: target.requested,
    request,
  };
  const encoder = new ResponsesEventEncoder(identity, options.choices);
  let failure: GatewayError | null;
  if (request.stream) {
    failure = await runStream(
      exchange,
      run.scope,
      openRouted(run, chat),
      new ResponsesStreamSurface(encoder, accountant),
      streamOptions(run, options),
    );
  } else {
    const result = await completeEvents(run, chat);
    failure = 'failure' in result ? result.failure : null;
    if ('events' in result) for (const e of result.events) encoder.encode(e);
  }
  if (!failure || !request.stream) {
    const usage = failure ? accountant.reportedUsage : await accountant.usage(run.scope.signal);
    const response = buildResponse(identity, encoder.state(usage));
    if (!failure && !request.stream) exchange.sendJson(200, response);
    if (!failure) save(run, options, identity, chat, response);
  }
  return failure;
}

/** Keeps the conversation (history, this input, this output) for previous_response_id. */
function save(
  run: RunScope,
  options: RunResponsesOptions,
  identity: ResponseIdentity,
  chat: CanonicalRequest,
  response: Record<string, unknown>,
): void {
  if (!options.store) return;
  // The instructions message (if any) is per-response and is not part of the conversation.
  const turn = chat.messages.slice(identity.request.instructions ? 1 : 0);
  const output = itemsToMessages(response.output as ResponsesInputItem[]);
  options.store
    .save({ id: identity.id, createdAt: identity.createdAt, model: identity.model, conversation: [...turn, ...output], response })
    .catch((err: Error) => run.ctx.accounting.log(`responses store: could not save ${identity.id}: ${err.message}`));
}

/**
 * POST /v1/responses relayed to an upstream that speaks it (events exactly as sent). Over the
 * route's candidates that relay the Responses API too: before the first output item a failure (a
 * connect error, 408/429/5xx, an `error` or response.failed event, no output within the TTFT
 * timeout) moves on to the next; a target that does not relay it is not tried.
 */
export async function relayResponses(
  run: RunScope,
  body: Record<string, unknown>,
  options: RunResponsesOptions,
): Promise<GatewayError | null> {
  const { accountant, exchange, target } = run;
  let provider = target.provider;
  const relay = routedRelay(
    run,
    (c) => c.target.adapter.responses,
    {},
    (event) => {
      provider = event.to.provider;
      accountant.observe(event);
    },
  );
  if (body.stream === true) {
    const surface = new RelayStreamSurface(accountant, () => provider, options.recordIds);
    const failure = await runStream(
      exchange,
      run.scope,
      relay.stream((candidate) => relayedBodyFor(body, candidate, 'responses'), responsesRelayReading),
      surface,
      streamOptions(run, options),
    );
    // Whatever the upstream handed out, the response failed or not: it may have stored it.
    options.recordIds?.(surface.laterIds());
    if (surface.finalResponse) traceOutput(run, surface.finalResponse);
    if (!failure && surface.finalResponse) saveRelayed(run, options, surface.finalResponse);
    return failure;
  }
  // The route's params first, then the budget's cap: a target's own limit cannot pass what the reservation pays for.
  const outcome = await relay.complete((candidate) =>
    capRelayedOutput(relayedBodyFor(body, candidate, 'responses'), run.admission.maxOutputTokens),
  );
  if (!outcome.ok) return outcome.failure;
  const response = outcome.value;
  accountant.markAcknowledged();
  for (const event of wholeResponseEvents(response)) accountant.observe(event);
  const usage = response.usage as Parameters<typeof fromResponsesUsage>[0] | undefined;
  if (usage) accountant.observe({ type: 'usage', usage: fromResponsesUsage(usage) });
  // Before the client has the ids: a continuation at once finds them recorded (or being recorded).
  options.recordIds?.(returnedIds(response));
  exchange.sendJson(200, response);
  traceOutput(run, response);
  saveRelayed(run, options, response);
  return null;
}

/**
 * A relayed answer's output items name every call, which its deltas do not: the trace records
 * them, unless the upstream listed none (then what its deltas said).
 */
function traceOutput(run: RunScope, response: Record<string, unknown>): void {
  if (Array.isArray(response.output) && response.output.length > 0) run.transcript?.outputItems(response.output);
}

/** A relayed response is kept for GET only; its continuation is the upstream's business. */
function saveRelayed(run: RunScope, options: RunResponsesOptions, response: Record<string, unknown>): void {
  if (!options.store || typeof response.id !== 'string') return;
  options.store
    .save({
      id: response.id,
      createdAt: Number(response.created_at ?? 0),
      model: String(response.model ?? ''),
      conversation: [],
      response,
    })
    .catch((err: Error) => run.ctx.accounting.log(`responses store: could not save ${String(response.id)}: ${err.message}`));
}

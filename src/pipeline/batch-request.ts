import type { IncomingMessage, ServerResponse } from 'node:http';
import { type LedgerRecord, NO_USAGE } from '../accounting/ledger-record.ts';
import type { Admission, Caller } from '../admission/admission.ts';
import { type GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import { logInternalError } from '../errors/log-internal-error.ts';
import type { PipelineContext } from './context.ts';
import { createExchange, type Exchange } from './exchange.ts';
import { writeRow } from './write-row.ts';

/** One endpoint of the Files and Batch APIs: its ledger surface and operation, and its error shape. */
export interface BatchEndpoint {
  surface: 'files' | 'batches';
  /** The ledger's model column for the request (`files.create`, `message_batches.results`): what was done. */
  operation: string;
  renderError: (error: GatewayError) => string;
  statusOf?: (error: GatewayError) => number;
}

/** What a relayed Files or Batch API request has while it runs. */
export interface BatchStep {
  caller: Caller;
  requestId: string;
  exchange: Exchange;
  /**
   * The admit step, once the provider is known: the caller's limits (requests per minute,
   * concurrency) and budgets (an exhausted one refuses), as for a chat request; a key's allowed
   * models are checked by the surface, where the request names models (a batch's).
   */
  admit(provider: string): Promise<void>;
  /** What the row records: the upstream's status and request id, the object's id, the bytes each way. */
  note(facts: { status?: number; upstreamRequestId?: string; objectId?: string; bytesIn?: number; bytesOut?: number }): void;
}

/**
 * A Files or Batch API request: authenticated, admitted, relayed by `run`, and recorded as one
 * ledger row (no tokens: a batch's usage is its settlement's row) however it ended; a failure
 * before the answer is the surface's HTTP error. Refused before the caller was known, it is
 * counted in the rejections table instead, as a model request is.
 */
export async function runBatchRequest(
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  ctx: PipelineContext,
  endpoint: BatchEndpoint,
  run: (step: BatchStep) => Promise<void>,
): Promise<void> {
  const exchange = createExchange(res, requestId, endpoint.renderError, endpoint.statusOf);
  const startedAt = Date.now();
  let caller: Caller | undefined;
  let provider = '';
  let admission: Admission | undefined;
  const facts: Parameters<BatchStep['note']>[0] = {};
  let failure: GatewayError | undefined;
  try {
    caller = await ctx.authenticate(req);
    const known = caller;
    await run({
      caller: known,
      requestId,
      exchange,
      async admit(name) {
        provider = name;
        admission = await ctx.admit({
          requestId,
          // No model is named by the request itself: the key's model list is the surface's to check.
          caller: { ...known, allowedModels: null },
          surface: endpoint.surface,
          target: { provider: name, model: endpoint.operation, requested: endpoint.operation },
          request: { model: endpoint.operation, messages: [] },
          inputTokens: 0,
          streamed: false,
        });
        if (admission.headers) for (const [header, value] of Object.entries(admission.headers)) res.setHeader(header, value);
      },
      note: (more) => Object.assign(facts, more),
    });
  } catch (err) {
    failure = toGatewayError(err);
    if (failure.code === 'internal_error') logInternalError(ctx.accounting.log, requestId, err);
    exchange.sendError(failure);
  }
  if (!caller) {
    ctx.accounting.rejections?.count(endpoint.surface, failure?.code ?? 'internal_error');
    return;
  }
  writeRow(ctx, admission, batchRequestRecord(requestId, caller, endpoint, provider, startedAt, facts, failure));
}

/** The row of a Files or Batch API request: no tokens, no cost; the object's id as the requested model. */
function batchRequestRecord(
  requestId: string,
  caller: Caller,
  endpoint: BatchEndpoint,
  provider: string,
  startedAt: number,
  facts: Parameters<BatchStep['note']>[0],
  failure: GatewayError | undefined,
): LedgerRecord {
  return {
    requestId,
    createdAt: startedAt,
    keyId: caller.keyId,
    projectId: caller.projectId,
    provider,
    model: endpoint.operation,
    requestedModel: facts.objectId ?? '',
    surface: endpoint.surface,
    streamed: false,
    ...NO_USAGE,
    ttftMs: null,
    latencyMs: Date.now() - startedAt,
    upstreamStatus: facts.status ?? failure?.upstreamStatus ?? null,
    outcome: failure ? (failure.code === 'cancelled' ? 'cancelled' : 'error') : 'ok',
    errorType: failure?.type ?? null,
    errorCode: failure?.code ?? null,
    errorMessage: failure?.message ?? null,
    upstreamErrorType: failure?.upstreamType ?? null,
    upstreamErrorCode: failure?.upstreamCode ?? null,
    upstreamRequestId: facts.upstreamRequestId ?? null,
    finishReason: null,
    prompt: null,
    completion: null,
    bytesIn: facts.bytesIn ?? null,
    bytesOut: facts.bytesOut ?? null,
  };
}

/** The upstream's request id, from whichever header it sends it in. */
export function upstreamRequestIdOf(headers: IncomingMessage['headers']): string | undefined {
  const id = headers['x-request-id'] ?? headers['request-id'];
  return typeof id === 'string' ? id : undefined;
}

import { errors } from '../../errors/catalog.ts';
import { anthropicErrorStatus, renderAnthropicError } from '../../protocol/anthropic-errors.ts';
import {
  answerJson,
  batchStore,
  type BatchProvider,
  callBatchApi,
  chooseBatchProvider,
  reachOwnObject,
  ownListPage,
  recordCreated,
  sendAnswer,
} from '../../pipeline/batch-objects.ts';
import { type BatchStep, runBatchRequest } from '../../pipeline/batch-request.ts';
import type { BatchAnswer, BatchCall } from '../../providers/batch-api.ts';
import { readJsonBody } from '../../protocol/http/read-json-body.ts';
import type { BatchObject } from '../../store/batch-objects-store.ts';
import { messageBatchModels, refuseDisallowedBatchModels } from './allowed-models.ts';
import type { BatchesCall } from './openai-batches.ts';
import { budgetRulesOf, settleQuietly, type SettleDeps } from './settle.ts';

/** The query parameters of GET /v1/messages/batches that go upstream (the SDKs may add their own). */
const LIST_QUERY = ['limit', 'after_id', 'before_id'];

const endpoint = (operation: string) => ({
  surface: 'batches' as const,
  operation,
  renderError: renderAnthropicError,
  statusOf: anthropicErrorStatus,
});

const betaOf = (call: BatchesCall): string | undefined => {
  const beta = call.req.headers['anthropic-beta'];
  return Array.isArray(beta) ? beta.join(',') : beta;
};

/**
 * POST /v1/messages/batches to Anthropic (or the provider X-Sluice-Provider names that speaks
 * Message Batches): a key with a model list may batch only its models (each request's
 * `params.model`). The new batch is the caller's project's.
 */
export function createMessageBatch(call: BatchesCall): Promise<void> {
  return runBatchRequest(call.req, call.res, call.requestId, call.ctx, endpoint('message_batches.create'), async (step) => {
    const store = batchStore(call.ctx);
    const body = await readJsonBody(call.req, call.ctx.config.server.body_limit_bytes);
    const requests = (body as { requests?: unknown } | null)?.requests;
    if (!Array.isArray(requests) || requests.length === 0)
      throw errors.invalidRequest('requests: a non-empty array of {custom_id, params} is required.', 'requests');
    const provider = chooseBatchProvider(call.ctx, call.req, 'anthropic');
    refuseDisallowedBatchModels(step.caller, provider.name, messageBatchModels(requests));
    await step.admit(provider.name);
    const text = JSON.stringify(body);
    const answer = await callBatchApi(
      step,
      provider.api,
      upstreamCall(call, { method: 'POST', path: '/messages/batches', contentType: 'application/json', body: text }),
      call.ctx,
    );
    const batch = answerJson(provider.name, answer);
    if (typeof batch.id !== 'string') throw errors.malformed(provider.name, 'the created message batch has no id');
    const budgets = budgetRulesOf(call.ctx.config, step.caller);
    await recordCreated(store, step, { id: batch.id, kind: 'message_batch', provider: provider.name, budgets });
    step.note({ bytesIn: Buffer.byteLength(text) });
    step.exchange.sendJson(answer.status, throughGateway(batch));
  });
}

/** GET /v1/messages/batches/{id}: as Anthropic has it, settled now if it has ended and no instance has settled it. */
export function retrieveMessageBatch(call: BatchesCall): Promise<void> {
  return onOwnMessageBatch(call, 'message_batches.retrieve', 'GET', '', async (step, answer, object, provider) => {
    const batch = answerJson(provider.name, answer);
    await settleQuietly(settleDeps(call), object, provider, batch);
    step.exchange.sendJson(answer.status, throughGateway(batch));
  });
}

/** POST /v1/messages/batches/{id}/cancel. */
export function cancelMessageBatch(call: BatchesCall): Promise<void> {
  return onOwnMessageBatch(call, 'message_batches.cancel', 'POST', '/cancel', async (step, answer, _object, provider) => {
    step.exchange.sendJson(answer.status, throughGateway(answerJson(provider.name, answer)));
  });
}

/** GET /v1/messages/batches/{id}/results: the JSONL as Anthropic sent it; its usage settles the batch if no instance has. */
export function messageBatchResults(call: BatchesCall): Promise<void> {
  return onOwnMessageBatch(call, 'message_batches.results', 'GET', '/results', async (step, answer, object, provider) => {
    step.note({ bytesOut: answer.body.length });
    sendAnswer(call.res, step.requestId, answer);
    // Results exist only once the batch has ended.
    await settleQuietly(settleDeps(call), object, provider, { processing_status: 'ended' }, answer.body.toString('utf8'));
  });
}

/**
 * DELETE /v1/messages/batches/{id}: an ended batch is settled first (its results go with it),
 * then deleted upstream and here.
 */
export function deleteMessageBatch(call: BatchesCall): Promise<void> {
  return runBatchRequest(call.req, call.res, call.requestId, call.ctx, endpoint('message_batches.delete'), async (step) => {
    const store = batchStore(call.ctx);
    const { object, provider } = await reachOwnObject(step, call.ctx, call.batchId, 'message_batch', notFound);
    const path = `/messages/batches/${encodeURIComponent(object.id)}`;
    if (object.settledAt === null) {
      const current = await callBatchApi(step, provider.api, upstreamCall(call, { method: 'GET', path }), call.ctx);
      await settleQuietly(settleDeps(call), object, provider, answerJson(provider.name, current));
    }
    const answer = await callBatchApi(step, provider.api, upstreamCall(call, { method: 'DELETE', path }), call.ctx);
    await store.markDeleted(object.id);
    sendAnswer(call.res, step.requestId, answer);
  });
}

/** GET /v1/messages/batches: Anthropic's page, cut to the caller's project's batches. */
export function listMessageBatches(call: BatchesCall): Promise<void> {
  return runBatchRequest(call.req, call.res, call.requestId, call.ctx, endpoint('message_batches.list'), async (step) => {
    const search = new URLSearchParams();
    for (const name of LIST_QUERY) {
      const value = call.search.get(name);
      if (value !== null) search.set(name, value);
    }
    const request = upstreamCall(call, { method: 'GET', path: '/messages/batches', search });
    const { status, page } = await ownListPage(step, call.ctx, call.req, 'anthropic', request, 'message_batch');
    const data = Array.isArray(page.data) ? (page.data as Record<string, unknown>[]).map(throughGateway) : page.data;
    step.exchange.sendJson(status, { ...page, data });
  });
}

function onOwnMessageBatch(
  call: BatchesCall,
  operation: string,
  method: 'GET' | 'POST',
  suffix: string,
  answered: (step: BatchStep, answer: BatchAnswer, object: BatchObject, provider: BatchProvider) => Promise<void>,
): Promise<void> {
  return runBatchRequest(call.req, call.res, call.requestId, call.ctx, endpoint(operation), async (step) => {
    const { object, provider } = await reachOwnObject(step, call.ctx, call.batchId, 'message_batch', notFound);
    const path = `/messages/batches/${encodeURIComponent(object.id)}${suffix}`;
    const answer = await callBatchApi(step, provider.api, upstreamCall(call, { method, path }), call.ctx);
    await answered(step, answer, object, provider);
  });
}

const notFound = (id: string) => errors.batchNotFound(id, 'message_batch_id');

const settleDeps = (call: BatchesCall): SettleDeps => ({ ctx: call.ctx, store: batchStore(call.ctx), newId: call.newId });

/** The client's `anthropic-beta` goes upstream with every call. */
const upstreamCall = (call: BatchesCall, request: BatchCall): BatchCall => ({ ...request, beta: betaOf(call) });

/**
 * A batch's `results_url` points at the gateway (relative to the client's base URL), not at
 * Anthropic: the SDKs fetch it with the gateway's key, and the read settles the batch.
 */
function throughGateway(batch: Record<string, unknown>): Record<string, unknown> {
  if (typeof batch.results_url !== 'string' || typeof batch.id !== 'string') return batch;
  return { ...batch, results_url: `/v1/messages/batches/${encodeURIComponent(batch.id)}/results` };
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors } from '../../errors/catalog.ts';
import { renderErrorBody } from '../../errors/render.ts';
import {
  answerJson,
  batchStore,
  type BatchProvider,
  callBatchApi,
  ownedObject,
  reachOwnObject,
  listOwnObjects,
  recordCreated,
  providerOf,
  sendAnswer,
} from '../../pipeline/batch-objects.ts';
import { type BatchStep, runBatchRequest } from '../../pipeline/batch-request.ts';
import type { PipelineContext } from '../../pipeline/context.ts';
import { readJsonBody } from '../../protocol/http/read-json-body.ts';
import type { BatchObject, BatchObjectsStore } from '../../store/batch-objects-store.ts';
import { inputFileModels, refuseDisallowedBatchModels } from './allowed-models.ts';
import { budgetRulesOf, settleQuietly } from './settle.ts';

/** What a Batch API route hands its operation. */
export interface BatchesCall {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  ctx: PipelineContext;
  batchId: string;
  search: URLSearchParams;
  /** Request ids for settlement rows. */
  newId: () => string;
}

/** The query parameters of GET /v1/batches that go upstream. */
export const LIST_BATCHES_QUERY = ['limit', 'after'] as const;

const endpoint = (operation: string) => ({ surface: 'batches' as const, operation, renderError: renderErrorBody });

/**
 * POST /v1/batches: the batch goes to the provider its input file was uploaded to, which must be
 * the caller's project's; a key with a model list may batch only its models (the input file is
 * read to check them). The new batch is the project's, and its row in the ledger is this request's.
 */
export function createBatch(call: BatchesCall): Promise<void> {
  return runBatchRequest(call.req, call.res, call.requestId, call.ctx, endpoint('batches.create'), async (step) => {
    const store = batchStore(call.ctx);
    const body = await readJsonBody(call.req, call.ctx.config.server.body_limit_bytes);
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw errors.invalidRequest('The body must be a JSON object.');
    const inputFileId = (body as { input_file_id?: unknown }).input_file_id;
    if (typeof inputFileId !== 'string' || !inputFileId)
      throw errors.invalidRequest('input_file_id is required: the id of an uploaded .jsonl file.', 'input_file_id');
    const file = await ownedObject(store, step.caller, inputFileId, 'file', (id) => errors.fileNotFound(id, 'input_file_id'));
    const provider = providerOf(call.ctx, file, 'openai');
    await step.admit(provider.name);
    if (step.caller.allowedModels) {
      const input = await callBatchApi(
        step,
        provider.api,
        { method: 'GET', path: `/files/${encodeURIComponent(file.id)}/content` },
        call.ctx,
      );
      refuseDisallowedBatchModels(step.caller, provider.name, inputFileModels(input.body.toString('utf8')));
    }
    const text = JSON.stringify(body);
    const answer = await callBatchApi(
      step,
      provider.api,
      { method: 'POST', path: '/batches', contentType: 'application/json', body: text },
      call.ctx,
    );
    const batch = answerJson(provider.name, answer);
    if (typeof batch.id !== 'string') throw errors.malformed(provider.name, 'the created batch has no id');
    await recordCreated(store, step, {
      id: batch.id,
      kind: 'batch',
      provider: provider.name,
      budgets: budgetRulesOf(call.ctx.config, step.caller),
    });
    step.note({ bytesIn: Buffer.byteLength(text) });
    sendAnswer(call.res, step.requestId, answer);
  });
}

/**
 * GET /v1/batches/{batch_id}: as the upstream has it. Its output and error files become the
 * project's (their content is the project's to read), and an ended batch is settled now if no
 * instance has settled it yet.
 */
export function retrieveBatch(call: BatchesCall): Promise<void> {
  return onOwnBatch(call, 'batches.retrieve', 'GET', '', async (step, answer, object, provider) => {
    const batch = answerJson(provider.name, answer);
    await adoptOutputFiles(batchStore(call.ctx), object, batch);
    await settleQuietly({ ctx: call.ctx, store: batchStore(call.ctx), newId: call.newId }, object, provider, batch);
    step.exchange.sendJson(answer.status, batch);
  });
}

/** POST /v1/batches/{batch_id}/cancel. */
export function cancelBatch(call: BatchesCall): Promise<void> {
  return onOwnBatch(call, 'batches.cancel', 'POST', '/cancel', async (step, answer) => {
    sendAnswer(call.res, step.requestId, answer);
  });
}

/** GET /v1/batches: the upstream's page, cut to the caller's project's batches. */
export function listBatches(call: BatchesCall): Promise<void> {
  return listOwnObjects(call, endpoint('batches.list'), '/batches', 'batch');
}

function onOwnBatch(
  call: BatchesCall,
  operation: string,
  method: 'GET' | 'POST',
  suffix: string,
  answered: (
    step: BatchStep,
    answer: Awaited<ReturnType<typeof callBatchApi>>,
    object: BatchObject,
    provider: BatchProvider,
  ) => Promise<void>,
): Promise<void> {
  return runBatchRequest(call.req, call.res, call.requestId, call.ctx, endpoint(operation), async (step) => {
    const { object, provider } = await reachOwnObject(step, call.ctx, call.batchId, 'batch', (id) => errors.batchNotFound(id));
    const answer = await callBatchApi(
      step,
      provider.api,
      { method, path: `/batches/${encodeURIComponent(object.id)}${suffix}` },
      call.ctx,
    );
    await answered(step, answer, object, provider);
  });
}

/** A batch's output and error files, made by the upstream, as files of the batch's project. */
export async function adoptOutputFiles(
  store: BatchObjectsStore,
  object: BatchObject,
  batch: Record<string, unknown>,
): Promise<void> {
  for (const field of ['output_file_id', 'error_file_id']) {
    const id = batch[field];
    if (typeof id !== 'string' || !id) continue;
    await store.record({ ...object, id, kind: 'file', budgets: null });
  }
}

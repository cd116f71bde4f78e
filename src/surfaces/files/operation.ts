import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors } from '../../errors/catalog.ts';
import { renderErrorBody } from '../../errors/render.ts';
import {
  answerJson,
  callBatchApi,
  batchStore,
  chooseBatchProvider,
  reachOwnObject,
  listOwnObjects,
  recordCreated,
  sendAnswer,
} from '../../pipeline/batch-objects.ts';
import { runBatchRequest } from '../../pipeline/batch-request.ts';
import type { PipelineContext } from '../../pipeline/context.ts';
import type { BatchCall } from '../../providers/batch-api.ts';
import { readBodyBytes } from '../../protocol/http/read-json-body.ts';

/** What a Files API route hands its operation: the HTTP exchange, the file id of the path, the query. */
export interface FilesCall {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  ctx: PipelineContext;
  fileId: string;
  search: URLSearchParams;
}

/** The query parameters of GET /v1/files that go upstream. */
export const LIST_FILES_QUERY = ['purpose', 'limit', 'after', 'order'] as const;

const endpoint = (operation: string) => ({ surface: 'files' as const, operation, renderError: renderErrorBody });

/**
 * POST /v1/files: the multipart upload relayed as it came (its boundary kept) to the provider
 * chosen (X-Sluice-Provider, batches.provider, else the first OpenAI-compatible one), and the
 * new file id kept as the caller's project's.
 */
export function uploadFile(call: FilesCall): Promise<void> {
  return runBatchRequest(call.req, call.res, call.requestId, call.ctx, endpoint('files.create'), async (step) => {
    const store = batchStore(call.ctx);
    const type = call.req.headers['content-type'];
    if (typeof type !== 'string' || !type.toLowerCase().startsWith('multipart/form-data')) {
      call.req.resume();
      throw errors.invalidRequest('A file is uploaded as multipart/form-data (fields `file` and `purpose`).', 'file');
    }
    const provider = chooseBatchProvider(call.ctx, call.req, 'openai');
    await step.admit(provider.name);
    const body = await readBodyBytes(call.req, call.ctx.config.batches.max_upload_bytes);
    const answer = await callBatchApi(step, provider.api, { method: 'POST', path: '/files', contentType: type, body }, call.ctx);
    const file = answerJson(provider.name, answer);
    if (typeof file.id !== 'string') throw errors.malformed(provider.name, 'the uploaded file has no id');
    await recordCreated(store, step, { id: file.id, kind: 'file', provider: provider.name, budgets: null });
    step.note({ bytesIn: body.length, bytesOut: answer.body.length });
    sendAnswer(call.res, step.requestId, answer);
  });
}

/** GET /v1/files: the upstream's page, cut to the caller's project's files. */
export function listFiles(call: FilesCall): Promise<void> {
  return listOwnObjects(call, endpoint('files.list'), '/files', 'file');
}

/** GET /v1/files/{file_id}. */
export function retrieveFile(call: FilesCall): Promise<void> {
  return onOwnFile(call, 'files.retrieve', (id) => ({ method: 'GET', path: `/files/${id}` }));
}

/** GET /v1/files/{file_id}/content: the bytes as the upstream sent them (a batch's output JSONL, an upload). */
export function fileContent(call: FilesCall): Promise<void> {
  return onOwnFile(call, 'files.content', (id) => ({ method: 'GET', path: `/files/${id}/content` }));
}

/** DELETE /v1/files/{file_id}: deleted upstream, then gone here for its project too. */
export function deleteFile(call: FilesCall): Promise<void> {
  return onOwnFile(call, 'files.delete', (id) => ({ method: 'DELETE', path: `/files/${id}` }), true);
}

/** A call on one file of the caller's project (another's is the 404 of an unknown id), relayed to the provider it was uploaded to. */
function onOwnFile(call: FilesCall, operation: string, upstream: (id: string) => BatchCall, deletes = false): Promise<void> {
  return runBatchRequest(call.req, call.res, call.requestId, call.ctx, endpoint(operation), async (step) => {
    const store = batchStore(call.ctx);
    const { object: file, provider } = await reachOwnObject(step, call.ctx, call.fileId, 'file', (id) => errors.fileNotFound(id));
    const answer = await callBatchApi(step, provider.api, upstream(encodeURIComponent(file.id)), call.ctx);
    if (deletes) await store.markDeleted(file.id);
    step.note({ bytesOut: answer.body.length });
    sendAnswer(call.res, step.requestId, answer);
  });
}

import {
  createBatch,
  cancelBatch,
  LIST_BATCHES_QUERY,
  listBatches,
  retrieveBatch,
} from '../../surfaces/batches/openai-batches.ts';
import type { BatchesCall } from '../../surfaces/batches/openai-batches.ts';
import {
  cancelMessageBatch,
  createMessageBatch,
  deleteMessageBatch,
  listMessageBatches,
  messageBatchResults,
  retrieveMessageBatch,
} from '../../surfaces/batches/message-batches.ts';
import {
  deleteFile,
  fileContent,
  type FilesCall,
  LIST_FILES_QUERY,
  listFiles,
  retrieveFile,
  uploadFile,
} from '../../surfaces/files/operation.ts';
import { newRequestId } from '../request-id.ts';
import type { Route, RouteCall } from '../route-table.ts';

const files = (handle: (call: FilesCall) => Promise<void>) => (call: RouteCall) =>
  handle({
    req: call.req,
    res: call.res,
    requestId: call.requestId,
    ctx: call.ctx,
    fileId: call.params.file_id ?? '',
    search: call.search,
  });

const batches = (param: string, handle: (call: BatchesCall) => Promise<void>) => (call: RouteCall) =>
  handle({
    req: call.req,
    res: call.res,
    requestId: call.requestId,
    ctx: call.ctx,
    batchId: call.params[param] ?? '',
    search: call.search,
    newId: () => newRequestId(),
  });

/**
 * OpenAI's Files and Batch API and Anthropic's Message Batches, relayed (docs/api/batches.md).
 * Each request authenticates itself (`model`: its refusals are recorded like a model request's)
 * and is one ledger row; their answers carry a project's data (no-store).
 */
export const batchRoutes: readonly Route[] = [
  { method: 'POST', path: '/v1/files', auth: 'model', noStore: true, query: [], handle: files(uploadFile) },
  { method: 'GET', path: '/v1/files', auth: 'model', noStore: true, query: LIST_FILES_QUERY, handle: files(listFiles) },
  { method: 'GET', path: '/v1/files/{file_id}', auth: 'model', noStore: true, query: [], handle: files(retrieveFile) },
  { method: 'DELETE', path: '/v1/files/{file_id}', auth: 'model', noStore: true, query: [], handle: files(deleteFile) },
  { method: 'GET', path: '/v1/files/{file_id}/content', auth: 'model', noStore: true, query: [], handle: files(fileContent) },
  { method: 'POST', path: '/v1/batches', auth: 'model', noStore: true, query: [], handle: batches('batch_id', createBatch) },
  {
    method: 'GET',
    path: '/v1/batches',
    auth: 'model',
    noStore: true,
    query: LIST_BATCHES_QUERY,
    handle: batches('batch_id', listBatches),
  },
  {
    method: 'GET',
    path: '/v1/batches/{batch_id}',
    auth: 'model',
    noStore: true,
    query: [],
    handle: batches('batch_id', retrieveBatch),
  },
  {
    method: 'POST',
    path: '/v1/batches/{batch_id}/cancel',
    auth: 'model',
    noStore: true,
    query: [],
    handle: batches('batch_id', cancelBatch),
  },
  // Anthropic's SDKs may add query parameters of their own: these routes pass on only the ones they know.
  { method: 'POST', path: '/v1/messages/batches', auth: 'model', noStore: true, handle: batches('id', createMessageBatch) },
  { method: 'GET', path: '/v1/messages/batches', auth: 'model', noStore: true, handle: batches('id', listMessageBatches) },
  ...(
    [
      ['GET', '', retrieveMessageBatch],
      ['DELETE', '', deleteMessageBatch],
      ['POST', '/cancel', cancelMessageBatch],
      ['GET', '/results', messageBatchResults],
    ] as const
  ).map(([method, suffix, handle]): Route => ({
    method,
    path: `/v1/messages/batches/{message_batch_id}${suffix}`,
    auth: 'model',
    noStore: true,
    handle: batches('message_batch_id', handle),
  })),
];

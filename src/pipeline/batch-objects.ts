import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller } from '../admission/admission.ts';
import { errors } from '../errors/catalog.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { BatchAnswer, BatchApi, BatchApiKind, BatchCall } from '../providers/batch-api.ts';
import { type BatchEndpoint, type BatchStep, runBatchRequest, upstreamRequestIdOf } from './batch-request.ts';
import type { BatchObject, BatchObjectKind, BatchObjectsStore } from '../store/batch-objects-store.ts';
import type { PipelineContext } from './context.ts';

/** A provider with a batch API, by name. */
export interface BatchProvider {
  name: string;
  api: BatchApi;
}

const API_NAME: Record<BatchApiKind, string> = {
  openai: 'the Files and Batch API (an OpenAI-compatible provider or Azure)',
  anthropic: 'Message Batches (Anthropic)',
};

/**
 * The provider a request that names no existing object goes to (an upload, a list, a message
 * batch): the one `X-Sluice-Provider` names, else `batches.provider` (OpenAI's API only), else
 * the first enabled provider that serves the API. A name that serves none is a 400 naming it.
 */
export function chooseBatchProvider(ctx: PipelineContext, req: IncomingMessage, kind: BatchApiKind): BatchProvider {
  const serving = ctx.registry.batchProviders(kind);
  const header = req.headers['x-sluice-provider'];
  const named = typeof header === 'string' && header ? header : kind === 'openai' ? ctx.config.batches.provider : undefined;
  if (named !== undefined) {
    const found = serving.find((p) => p.name === named);
    const where = typeof header === 'string' && header ? 'X-Sluice-Provider' : 'batches.provider';
    if (!found)
      throw errors.batchesUnavailable(
        `${where} names '${named}', which does not serve ${API_NAME[kind]} here (serving: ${serving.map((p) => p.name).join(', ') || 'none'}).`,
        where,
      );
    return found;
  }
  if (serving.length === 0) throw errors.batchesUnavailable(`No provider enabled here serves ${API_NAME[kind]}.`);
  return serving[0];
}

/** The provider an object was created with, if it is still enabled. */
export function providerOf(ctx: PipelineContext, object: BatchObject, kind: BatchApiKind): BatchProvider {
  const found = ctx.registry.batchProviders(kind).find((p) => p.name === object.provider);
  if (!found)
    throw errors.batchesUnavailable(`${object.id} was created with provider '${object.provider}', which is not enabled now.`);
  return found;
}

/** The store the Files and Batch APIs scope their ids with: without one no id could be kept to its project. */
export function batchStore(ctx: PipelineContext): BatchObjectsStore {
  if (!ctx.batchObjects)
    throw errors.batchesUnavailable('The Files and Batch APIs need the store (ledger.enabled) to keep each id to its project.');
  return ctx.batchObjects;
}

/**
 * The caller's object of this id: its project's (any project's for the master key and admin
 * keys); another project's, a deleted or an unknown one is the 404 of an unknown id.
 */
export async function ownedObject(
  store: BatchObjectsStore,
  caller: Caller,
  id: string,
  kind: BatchObjectKind,
  notFound: (id: string) => GatewayError,
): Promise<BatchObject> {
  const object = await store.find(id, kind);
  if (!object || (!caller.admin && object.projectId !== caller.projectId)) throw notFound(id);
  return object;
}

/**
 * A list page of the upstream's (`data`: objects with an `id`) cut to the caller's project's: the
 * upstream lists every project's, all created with the operator's one key. The master key and
 * admin keys see the page as it is. The page's cursors stay the upstream's.
 */
async function ownPage(
  store: BatchObjectsStore,
  caller: Caller,
  page: Record<string, unknown>,
  kind: BatchObjectKind,
): Promise<Record<string, unknown>> {
  if (caller.admin || !Array.isArray(page.data)) return page;
  const items = page.data as { id?: unknown }[];
  const ids = items.map((item) => (typeof item?.id === 'string' ? item.id : ''));
  const owned = await store.owned(ids, kind, caller.projectId);
  return { ...page, data: items.filter((_, i) => owned.has(ids[i])) };
}

/**
 * The caller's object of this id (ownedObject) and its provider, the request admitted on it:
 * what every call on an existing file or batch starts with.
 */
export async function reachOwnObject(
  step: BatchStep,
  ctx: PipelineContext,
  id: string,
  kind: BatchObjectKind,
  notFound: (id: string) => GatewayError,
): Promise<{ object: BatchObject; provider: BatchProvider }> {
  const object = await ownedObject(batchStore(ctx), step.caller, id, kind, notFound);
  const provider = providerOf(ctx, object, kind === 'message_batch' ? 'anthropic' : 'openai');
  await step.admit(provider.name);
  step.note({ objectId: object.id });
  return { object, provider };
}

/** A file or batch the upstream just created, kept as the caller's project's and key's, with the request that created it. */
export function recordCreated(
  store: BatchObjectsStore,
  step: BatchStep,
  created: { id: string; kind: BatchObjectKind; provider: string; budgets: string | null },
): Promise<void> {
  step.note({ objectId: created.id });
  return store.record({ ...created, projectId: step.caller.projectId, keyId: step.caller.keyId, requestId: step.requestId });
}

/**
 * GET /v1/files or GET /v1/batches: the OpenAI-compatible upstream's page of `path`, cut to the
 * caller's project's objects of `objectKind`, answered as it came otherwise.
 */
export function listOwnObjects(
  call: { req: IncomingMessage; res: ServerResponse; requestId: string; ctx: PipelineContext; search: URLSearchParams },
  endpoint: BatchEndpoint,
  path: string,
  objectKind: BatchObjectKind,
): Promise<void> {
  return runBatchRequest(call.req, call.res, call.requestId, call.ctx, endpoint, async (step) => {
    const request = { method: 'GET' as const, path, search: call.search };
    const list = await ownListPage(step, call.ctx, call.req, 'openai', request, objectKind);
    step.exchange.sendJson(list.status, list.page);
  });
}

/** A list page from the provider chosen for the request (chooseBatchProvider), cut to the caller's project's objects. */
export async function ownListPage(
  step: BatchStep,
  ctx: PipelineContext,
  req: IncomingMessage,
  kind: BatchApiKind,
  request: BatchCall,
  objectKind: BatchObjectKind,
): Promise<{ status: number; page: Record<string, unknown> }> {
  const store = batchStore(ctx);
  const provider = chooseBatchProvider(ctx, req, kind);
  await step.admit(provider.name);
  const answer = await callBatchApi(step, provider.api, request, ctx);
  return { status: answer.status, page: await ownPage(store, step.caller, answerJson(provider.name, answer), objectKind) };
}

/** An answer relayed as the upstream gave it (its status, content type and bytes). */
export function sendAnswer(
  res: ServerResponse,
  requestId: string,
  answer: BatchAnswer,
  body: Buffer | string = answer.body,
): void {
  if (res.headersSent || res.destroyed) return;
  const type = answer.headers['content-type'];
  res.writeHead(answer.status, {
    'Content-Type': typeof type === 'string' ? type : 'application/json',
    'Content-Length': Buffer.byteLength(body),
    'X-Request-ID': requestId,
  });
  res.end(body);
}

/** One upstream call: its status and request id noted for the row, a failure thrown as the provider's error. */
export async function callBatchApi(
  step: BatchStep,
  api: BatchApi,
  request: BatchCall,
  ctx: PipelineContext,
): Promise<BatchAnswer> {
  const answer = await api.send(request, batchCallSignal(ctx), ctx.config.batches.max_download_bytes);
  step.note({ status: answer.status, upstreamRequestId: upstreamRequestIdOf(answer.headers) });
  refuseFailed(api, answer);
  return answer;
}

/** An upstream answer that is not a success, as the provider's error (thrown). */
export function refuseFailed(api: BatchApi, answer: BatchAnswer): void {
  if (answer.status < 200 || answer.status >= 300)
    throw api.mapError(answer.status, answer.headers, answer.body.toString('utf8'));
}

/** An upstream success's JSON object; a body that is not one is the provider's malformed answer. */
export function answerJson(provider: string, answer: BatchAnswer): Record<string, unknown> {
  try {
    const parsed = JSON.parse(answer.body.toString('utf8')) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Reported below.
  }
  throw errors.malformed(provider, `the answer is not a JSON object: ${answer.body.toString('utf8').slice(0, 200)}`);
}

/** How long one relayed call may take: the upstream's headers timeout plus a minute for the body. */
function batchCallSignal(ctx: PipelineContext): AbortSignal {
  return AbortSignal.timeout(ctx.config.upstream.headers_timeout_s * 1000 + 60_000);
}

import cluster from 'node:cluster';
import { errors } from '../errors/catalog.ts';
import { STREAM_PROFILE_NAMES, type StreamProfileName } from '../config/stream-profile-names.ts';
import { STREAM_PROFILES } from '../protocol/stream-profiles.ts';
import { streamOverrides } from '../pipeline/endpoint-context.ts';
import { chatCompletions } from '../surfaces/chat/operation.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import { createResponse } from '../surfaces/responses/operation.ts';
import type { McpForModels } from '../mcp/run-tool-loop.ts';
import { createMessage } from '../surfaces/messages/operation.ts';
import { createEmbeddings } from '../surfaces/embeddings/operation.ts';
import { createImages, editImages } from '../surfaces/images/operation.ts';
import { createSpeech, createTranscription, createTranslation } from '../surfaces/audio/operation.ts';
import { anthropicErrorStatus } from '../protocol/anthropic-errors.ts';
import { createExchange } from '../pipeline/exchange.ts';
import { handleModelRequest } from '../pipeline/handle-model-request.ts';
import type { ModelOperation } from '../pipeline/model-operation.ts';
import { sendJson } from '../protocol/http/send-json.ts';
import type { Route, RouteCall } from './route-table.ts';
import {
  DELETE_PROJECT_QUERY,
  ENDPOINTS_QUERY,
  handleCreateEndpoint,
  handleCreateKey,
  handleCreateProject,
  handleDeleteEndpoint,
  handleDeleteKey,
  handleDeleteProject,
  handleListEndpoints,
  handleListKeys,
  handleListProjects,
  handleRevokeKey,
  handleRotateKey,
  handleUpdateEndpoint,
  handleUpdateKey,
  handleUpdateProject,
  KEYS_QUERY,
  PROJECTS_QUERY,
} from './routes/admin.ts';
import { handleOpenApi } from './routes/admin-openapi.ts';
import {
  EVENTS_QUERY,
  handleEvents,
  handleLogin,
  handleLogout,
  handleSession,
  handleStats,
  STATS_QUERY,
} from '../console/console-api.ts';
import { handlePriceUsed } from '../console/price-used.ts';
import { serveConsoleFile } from '../console/static-files.ts';
import { handleUsage } from '../console/usage.ts';
import { handleSsoCallback, handleSsoLogin, handleSsoStatus } from '../console/sso-api.ts';
import { AUDIT_QUERY, handleListAudit } from './routes/audit.ts';
import { handleListModels } from './routes/models.ts';
import { handleGetUser, handleListUsers, handleSetUserAccess } from './routes/users.ts';
import { handleMcp } from './routes/mcp.ts';
import { handleMetrics } from './routes/metrics.ts';
import { handleReload } from './routes/reload.ts';
import { handleListReconciliations, handleRunReconciliation, RECONCILIATIONS_QUERY } from './routes/reconciliations.ts';
import { handleGetRequest, handleListRequests, LIST_REQUESTS_QUERY } from './routes/requests.ts';
import { type BodyReader, endpointModelRoute, readJson, readUpload } from './routes/endpoints.ts';
import { handleSpend } from './routes/spend.ts';
import { handleSpendBudgets } from './routes/spend-budgets.ts';
import { SPEND_QUERY } from './routes/spend-query.ts';
import { countTokensRoute, endpointCountTokensRoute } from './routes/messages-count-tokens.ts';
import { handleGetResponse } from './routes/responses.ts';
import { handleResumeStream, resumable } from './routes/streams.ts';
import { batchRoutes } from './routes/batches.ts';

/**
 * A model endpoint: the HTTP edge hands the exchange and the body reader to the lifecycle.
 * `statusOf`: the error statuses of a surface whose API has its own (exchange.ts).
 */
function modelRoute(
  operation: (call: RouteCall) => ModelOperation,
  statusOf?: (error: GatewayError) => number,
  read: BodyReader = readJson,
) {
  return (call: RouteCall) => {
    const op = operation(call);
    const exchange = { ...createExchange(call.res, call.requestId, op.renderError, statusOf), resume: resumable(call) };
    return handleModelRequest(exchange, call.req, () => read(call), op, call.ctx);
  };
}

/** The MCP gateway as a model request's `{"type": "mcp"}` tools reach it: grants may name the endpoint, as at /mcp. */
function mcpFor(call: RouteCall, endpoint: string | null): McpForModels {
  return { deps: call.ctx.mcp.toolCalls(), place: { endpoint } };
}

/** `X-Sluice-Profile: accounting` (any stream profile's name) chooses the stream profile per request; else the endpoint's or the config's. */
function profileOf(call: RouteCall): StreamProfileName | undefined {
  const header = call.req.headers['x-sluice-profile'];
  return STREAM_PROFILE_NAMES.find((name) => name === header);
}

/**
 * A route under `/api/v1`, the accounting reference's base path (`https://…/api/v1/chat/completions`):
 * served when the config's stream profile says so, else unknown, as it is to OpenAI's API.
 */
function underApiPrefix(handle: (call: RouteCall) => Promise<void>) {
  return (call: RouteCall) => {
    if (!STREAM_PROFILES[call.ctx.config.stream.profile].apiPrefix) {
      const url = call.req.url ?? '';
      throw errors.routeNotFound(call.req.method ?? 'POST', url.split('?')[0]);
    }
    return handle(call);
  };
}

const chatRoute = modelRoute((call) => chatCompletions({ header: profileOf(call) }, mcpFor(call, null)));
const responsesRoute = modelRoute((call) => createResponse({ header: profileOf(call) }, mcpFor(call, null)));
const embeddingsRoute = modelRoute(() => createEmbeddings);
const endpointChatRoute = (apiPrefix: boolean) =>
  endpointModelRoute(
    (call, endpoint) =>
      chatCompletions({ header: profileOf(call), endpoint: streamOverrides(endpoint) }, mcpFor(call, endpoint?.name ?? null)),
    undefined,
    apiPrefix,
  );
const endpointResponsesRoute = (apiPrefix: boolean) =>
  endpointModelRoute(
    (call, endpoint) =>
      createResponse({ header: profileOf(call), endpoint: streamOverrides(endpoint) }, mcpFor(call, endpoint?.name ?? null)),
    undefined,
    apiPrefix,
  );

/** The client's `anthropic-beta` header goes to an Anthropic target with the body. */
function messagesOperation(call: RouteCall): ModelOperation {
  const beta = call.req.headers['anthropic-beta'];
  return createMessage(Array.isArray(beta) ? beta.join(',') : beta);
}

/** A path under a prefix that has no route of its own: the 404 an unknown path gets anywhere. */
function unknownRoute({ req }: RouteCall): never {
  const url = req.url ?? '';
  const query = url.indexOf('?');
  throw errors.routeNotFound(req.method ?? 'GET', query === -1 ? url : url.slice(0, query));
}

// Under `sluice serve --workers N`, which process answered (a worker is restarted under a new pid).
const worker = cluster.isWorker ? { worker_pid: process.pid } : {};
const health = ({ res, ctx }: RouteCall) => sendJson(res, 200, { status: 'ok', providers: ctx.registry.providers(), ...worker });
/** Readiness (server/readiness.ts): 503 when a required check is down, naming each check's state. */
const ready = async ({ res, ctx }: RouteCall) => {
  const { ready, checks } = await ctx.readiness();
  sendJson(res, ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', checks, ...worker });
};

/** The media endpoints under `/v1/`, each with its operation and how its body is read. */
const mediaRoutes: { path: string; operation: ModelOperation; read: BodyReader }[] = [
  { path: 'images/generations', operation: createImages, read: readJson },
  { path: 'images/edits', operation: editImages, read: readUpload },
  { path: 'audio/transcriptions', operation: createTranscription, read: readUpload },
  { path: 'audio/translations', operation: createTranslation, read: readUpload },
  { path: 'audio/speech', operation: createSpeech, read: readJson },
];

/**
 * Every route sluice serves, as data: new surfaces, the admin API and the console add entries
 * here, never branches in the server.
 */
export const routes: readonly Route[] = [
  { method: 'GET', path: '/healthz', auth: 'open', handle: health },
  { method: 'GET', path: '/health', auth: 'open', handle: health },
  // Readiness for load balancers and Kubernetes (docs/operations/kubernetes.md); /healthz is liveness.
  { method: 'GET', path: '/readyz', auth: 'open', handle: ready },
  // Prometheus metrics (docs/operations/observability.md "Metrics"): the handler checks the key unless metrics.public is set.
  { method: 'GET', path: '/metrics', auth: 'open', handle: handleMetrics },
  // Route targets' breakers, cooldowns and TTFT averages, as this instance sees them (docs/routing.md).
  {
    method: 'GET',
    path: '/healthz/providers',
    auth: 'key',
    handle: ({ res, ctx, requestId }) =>
      sendJson(res, 200, { object: 'list', scope: 'instance', data: ctx.router.healthView() }, { 'X-Request-ID': requestId }),
  },
  { method: 'POST', path: '/v1/chat/completions', auth: 'model', handle: chatRoute },
  { method: 'POST', path: '/v1/responses', auth: 'model', handle: responsesRoute },
  // Anthropic's Messages API (docs/api/messages.md): `base_url` is the gateway's origin for the Anthropic SDKs.
  { method: 'POST', path: '/v1/messages', auth: 'model', handle: modelRoute(messagesOperation, anthropicErrorStatus) },
  { method: 'POST', path: '/v1/messages/count_tokens', auth: 'model', handle: countTokensRoute },
  // OpenAI's Files and Batch API, Anthropic's Message Batches (docs/api/batches.md).
  ...batchRoutes,
  // OpenAI's embeddings API over every provider with embedding models (docs/api/embeddings.md).
  { method: 'POST', path: '/v1/embeddings', auth: 'model', handle: embeddingsRoute },
  // The same under /api/v1 where the stream profile serves that base path (docs/streams/profiles.md).
  { method: 'POST', path: '/api/v1/chat/completions', auth: 'model', handle: underApiPrefix(chatRoute) },
  { method: 'POST', path: '/api/v1/responses', auth: 'model', handle: underApiPrefix(responsesRoute) },
  { method: 'POST', path: '/api/v1/embeddings', auth: 'model', handle: underApiPrefix(embeddingsRoute) },
  // A project's endpoints: `base_url=https://…/{project}/{endpoint}/v1` (docs/governance/keys.md).
  { method: 'POST', path: '/{project}/{endpoint}/v1/chat/completions', auth: 'model', handle: endpointChatRoute(false) },
  { method: 'POST', path: '/{project}/{endpoint}/v1/responses', auth: 'model', handle: endpointResponsesRoute(false) },
  { method: 'POST', path: '/{project}/{endpoint}/api/v1/chat/completions', auth: 'model', handle: endpointChatRoute(true) },
  { method: 'POST', path: '/{project}/{endpoint}/api/v1/responses', auth: 'model', handle: endpointResponsesRoute(true) },
  {
    method: 'POST',
    path: '/{project}/{endpoint}/v1/messages',
    auth: 'model',
    handle: endpointModelRoute(messagesOperation, anthropicErrorStatus),
  },
  { method: 'POST', path: '/{project}/{endpoint}/v1/messages/count_tokens', auth: 'model', handle: endpointCountTokensRoute },
  {
    method: 'POST',
    path: '/{project}/{endpoint}/v1/embeddings',
    auth: 'model',
    handle: endpointModelRoute(() => createEmbeddings),
  },
  // OpenAI's images and audio APIs, relayed to providers that serve them (docs/api/images.md, docs/api/audio.md);
  // the uploads (image edits, audio to transcribe) are multipart, within server.upload_limit_bytes.
  ...mediaRoutes.flatMap(({ path, operation, read }): Route[] => [
    { method: 'POST', path: `/v1/${path}`, auth: 'model', handle: modelRoute(() => operation, undefined, read) },
    {
      method: 'POST',
      path: `/{project}/{endpoint}/v1/${path}`,
      auth: 'model',
      handle: endpointModelRoute(() => operation, undefined, false, read),
    },
  ]),
  // The MCP gateway (docs/api/mcp.md): MCP's Streamable HTTP transport, POST, GET and DELETE.
  ...(['POST', 'GET', 'DELETE'] as const).flatMap((method): Route[] => [
    { method, path: '/mcp', auth: 'key', noStore: true, handle: handleMcp },
    { method, path: '/{project}/{endpoint}/mcp', auth: 'key', noStore: true, handle: handleMcp },
  ]),
  {
    method: 'GET',
    path: '/v1/responses/',
    param: 'response_id',
    auth: 'key',
    noStore: true,
    handle: ({ res, ctx, param, requestId, caller }) => handleGetResponse(res, ctx, param, requestId, caller),
  },
  // Resuming a stream after a lost connection, with Last-Event-ID (docs/streams/resume.md).
  { method: 'GET', path: '/v1/streams/', param: 'request_id', auth: 'key', handle: handleResumeStream },
  {
    method: 'GET',
    path: '/v1/requests',
    auth: 'key',
    noStore: true,
    query: LIST_REQUESTS_QUERY,
    handle: ({ res, ctx, search, requestId, caller }) => handleListRequests(res, ctx, search, requestId, caller),
  },
  {
    method: 'GET',
    path: '/v1/requests/',
    param: 'request_id',
    auth: 'key',
    noStore: true,
    query: [],
    handle: ({ res, ctx, param, requestId, caller }) => handleGetRequest(res, ctx, param, requestId, caller),
  },
  // Spend reports from the rollups, and budgets' burn-down (docs/governance/spend.md): scoped like the request log.
  { method: 'GET', path: '/v1/spend', auth: 'key', noStore: true, query: SPEND_QUERY, handle: handleSpend },
  { method: 'GET', path: '/v1/spend/budgets', auth: 'key', noStore: true, query: [], handle: handleSpendBudgets },
  { method: 'GET', path: '/v1/models', auth: 'key', handle: ({ res, ctx, requestId }) => handleListModels(res, ctx, requestId) },
  // The admin API (docs/governance/keys.md), described by /admin/openapi.json: the master key, an admin key,
  // or a signed-in user whose role grants the route's permission (docs/governance/users.md; a member: its
  // projects' keys only).
  { method: 'GET', path: '/admin/openapi.json', auth: 'admin', query: [], handle: handleOpenApi },
  { method: 'POST', path: '/admin/projects', auth: 'admin', handle: handleCreateProject },
  { method: 'GET', path: '/admin/projects', auth: 'admin', query: PROJECTS_QUERY, handle: handleListProjects },
  { method: 'PATCH', path: '/admin/projects/{project}', auth: 'admin', query: [], handle: handleUpdateProject },
  {
    method: 'DELETE',
    path: '/admin/projects/{project}',
    auth: 'admin',
    query: DELETE_PROJECT_QUERY,
    handle: handleDeleteProject,
  },
  { method: 'POST', path: '/admin/keys', auth: 'admin', permission: 'keys', handle: handleCreateKey },
  { method: 'GET', path: '/admin/keys', auth: 'admin', query: KEYS_QUERY, handle: handleListKeys },
  { method: 'PATCH', path: '/admin/keys/{key_id}', auth: 'admin', permission: 'keys', query: [], handle: handleUpdateKey },
  { method: 'DELETE', path: '/admin/keys/{key_id}', auth: 'admin', permission: 'keys', query: [], handle: handleDeleteKey },
  { method: 'POST', path: '/admin/keys/{key_id}/revoke', auth: 'admin', permission: 'keys', handle: handleRevokeKey },
  { method: 'POST', path: '/admin/keys/{key_id}/rotate', auth: 'admin', permission: 'keys', handle: handleRotateKey },
  { method: 'POST', path: '/admin/endpoints', auth: 'admin', handle: handleCreateEndpoint },
  { method: 'GET', path: '/admin/endpoints', auth: 'admin', query: ENDPOINTS_QUERY, handle: handleListEndpoints },
  { method: 'PATCH', path: '/admin/endpoints/{project}/{endpoint}', auth: 'admin', query: [], handle: handleUpdateEndpoint },
  { method: 'DELETE', path: '/admin/endpoints/{project}/{endpoint}', auth: 'admin', query: [], handle: handleDeleteEndpoint },
  // The console's users, for an owner (docs/governance/users.md).
  { method: 'GET', path: '/admin/users', auth: 'admin', permission: 'users', query: [], handle: handleListUsers },
  { method: 'GET', path: '/admin/users/{user_id}', auth: 'admin', permission: 'users', query: [], handle: handleGetUser },
  { method: 'POST', path: '/admin/users/{user_id}', auth: 'admin', permission: 'users', handle: handleSetUserAccess },
  // The config read again and applied to the requests to come (docs/operations/reload.md).
  { method: 'POST', path: '/admin/reload', auth: 'admin', handle: handleReload },
  // Who changed what, and the console's sign-ins (docs/operations/audit-log.md): every project's, so
  // not a member's or a viewer's to read.
  {
    method: 'GET',
    path: '/admin/audit',
    auth: 'admin',
    permission: 'manage',
    noStore: true,
    query: AUDIT_QUERY,
    handle: handleListAudit,
  },
  // The ledger against the providers' own usage and cost reports (docs/operations/reconciliation.md):
  // every project's spend, so an admin's.
  {
    method: 'GET',
    path: '/admin/reconciliations',
    auth: 'admin',
    permission: 'manage',
    noStore: true,
    query: RECONCILIATIONS_QUERY,
    handle: handleListReconciliations,
  },
  { method: 'POST', path: '/admin/reconciliations', auth: 'admin', noStore: true, handle: handleRunReconciliation },
  // The console (docs/console.md): its static bundle is open, its data needs an admin's session or key.
  { method: 'GET', path: '/console', auth: 'open', handle: serveConsoleFile },
  { method: 'GET', path: '/console/', auth: 'open', handle: serveConsoleFile },
  // Prefix routes match in table order: the longer prefixes come first. An unknown API path is a
  // JSON 404, not the page (which the console's own paths, /console/keys..., are).
  {
    method: 'GET',
    path: '/console/api/price/',
    param: 'request_id',
    auth: 'admin',
    noStore: true,
    query: [],
    handle: handlePriceUsed,
  },
  { method: 'GET', path: '/console/api', auth: 'open', noStore: true, handle: unknownRoute },
  { method: 'GET', path: '/console/api/', param: 'path', auth: 'open', noStore: true, handle: unknownRoute },
  { method: 'POST', path: '/console/api/', param: 'path', auth: 'open', noStore: true, handle: unknownRoute },
  { method: 'GET', path: '/console/', param: 'file', auth: 'open', handle: serveConsoleFile },
  { method: 'POST', path: '/console/api/login', auth: 'open', noStore: true, handle: handleLogin },
  // Sign-in with OpenID Connect when auth.sso is set (docs/governance/users.md); a 404 otherwise.
  { method: 'GET', path: '/console/api/sso', auth: 'open', noStore: true, query: [], handle: handleSsoStatus },
  { method: 'GET', path: '/console/api/sso/login', auth: 'open', noStore: true, query: [], handle: handleSsoLogin },
  { method: 'GET', path: '/console/api/sso/callback', auth: 'open', noStore: true, handle: handleSsoCallback },
  { method: 'POST', path: '/console/api/logout', auth: 'open', noStore: true, handle: handleLogout },
  { method: 'GET', path: '/console/api/session', auth: 'admin', noStore: true, query: [], handle: handleSession },
  { method: 'GET', path: '/console/api/events', auth: 'admin', noStore: true, query: EVENTS_QUERY, handle: handleEvents },
  { method: 'GET', path: '/console/api/stats', auth: 'admin', noStore: true, query: STATS_QUERY, handle: handleStats },
  { method: 'GET', path: '/console/api/usage', auth: 'admin', noStore: true, query: [], handle: handleUsage },
];

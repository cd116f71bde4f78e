import cluster from 'node:cluster';
import { streamOverrides } from '../pipeline/endpoint-context.ts';
import { chatCompletions } from '../pipeline/chat-completions.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import { createResponse } from '../pipeline/create-response.ts';
import { createMessage } from '../pipeline/messages.ts';
import { createEmbeddings } from '../pipeline/embeddings.ts';
import { anthropicErrorStatus } from '../protocol/anthropic-messages/errors.ts';
import { createExchange } from '../pipeline/exchange.ts';
import { handleModelRequest } from '../pipeline/handle-model-request.ts';
import type { ModelOperation } from '../pipeline/model-operation.ts';
import { sendJson } from '../protocol/http/send-json.ts';
import { readJsonBody } from '../protocol/http/read-json-body.ts';
import type { Route, RouteCall } from './route-table.ts';
import {
  handleCreateEndpoint,
  handleCreateKey,
  handleCreateProject,
  handleListEndpoints,
  handleListKeys,
  handleListProjects,
  handleRevokeKey,
  handleRotateKey,
} from './routes/admin.ts';
import { handleEvents, handleLogin, handleLogout, handleSession, handleStats } from '../console/console-api.ts';
import { handlePriceUsed } from '../console/price-used.ts';
import { serveConsoleFile } from '../console/static-files.ts';
import { handleUsage } from '../console/usage.ts';
import { handleListModels } from './routes/models.ts';
import { handleMetrics } from './routes/metrics.ts';
import { handleGetRequest, handleListRequests } from './routes/requests.ts';
import { endpointModelRoute } from './routes/endpoints.ts';
import { countTokensRoute, endpointCountTokensRoute } from './routes/messages-count-tokens.ts';
import { handleGetResponse } from './routes/responses.ts';
import { handleResumeStream, resumable } from './routes/streams.ts';

/**
 * A model endpoint: the HTTP edge hands the exchange and the body reader to the lifecycle.
 * `statusOf`: the error statuses of a surface whose API has its own (exchange.ts).
 */
function modelRoute(operation: (call: RouteCall) => ModelOperation, statusOf?: (error: GatewayError) => number) {
  return (call: RouteCall) => {
    const op = operation(call);
    const exchange = { ...createExchange(call.res, call.requestId, op.renderError, statusOf), resume: resumable(call) };
    const readBody = () => readJsonBody(call.req, call.ctx.config.server.body_limit_bytes);
    return handleModelRequest(exchange, call.req, readBody, op, call.ctx);
  };
}

/** `X-Sluice-Profile: accounting` chooses the stream profile per request; else the config's. */
function profileOf(call: RouteCall): 'openai' | 'accounting' | undefined {
  const header = call.req.headers['x-sluice-profile'];
  return header === 'accounting' || header === 'openai' ? header : undefined;
}

/** The client's `anthropic-beta` header goes to an Anthropic target with the body. */
function messagesOperation(call: RouteCall): ModelOperation {
  const beta = call.req.headers['anthropic-beta'];
  return createMessage(Array.isArray(beta) ? beta.join(',') : beta);
}

// Under `sluice serve --workers N`, which process answered (a worker is restarted under a new pid).
const worker = cluster.isWorker ? { worker_pid: process.pid } : {};
const health = ({ res, ctx }: RouteCall) => sendJson(res, 200, { status: 'ok', providers: ctx.registry.providers(), ...worker });
/** Readiness (server/readiness.ts): 503 when a required check is down, naming each check's state. */
const ready = async ({ res, ctx }: RouteCall) => {
  const { ready, checks } = await ctx.readiness();
  sendJson(res, ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', checks, ...worker });
};

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
  { method: 'POST', path: '/v1/chat/completions', auth: 'model', handle: modelRoute((call) => chatCompletions(profileOf(call))) },
  { method: 'POST', path: '/v1/responses', auth: 'model', handle: modelRoute(() => createResponse) },
  // Anthropic's Messages API (docs/api/messages.md): `base_url` is the gateway's origin for the Anthropic SDKs.
  { method: 'POST', path: '/v1/messages', auth: 'model', handle: modelRoute(messagesOperation, anthropicErrorStatus) },
  { method: 'POST', path: '/v1/messages/count_tokens', auth: 'model', handle: countTokensRoute },
  // OpenAI's embeddings API over every provider with embedding models (docs/api/embeddings.md).
  { method: 'POST', path: '/v1/embeddings', auth: 'model', handle: modelRoute(() => createEmbeddings) },
  // A project's endpoints: `base_url=https://…/{project}/{endpoint}/v1` (docs/governance/keys.md).
  {
    method: 'POST',
    path: '/{project}/{endpoint}/v1/chat/completions',
    auth: 'model',
    handle: endpointModelRoute((call, endpoint) => chatCompletions(profileOf(call), streamOverrides(endpoint))),
  },
  { method: 'POST', path: '/{project}/{endpoint}/v1/responses', auth: 'model', handle: endpointModelRoute(() => createResponse) },
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
  {
    method: 'GET',
    path: '/v1/responses/',
    param: 'response_id',
    auth: 'key',
    handle: ({ res, ctx, param, requestId, caller }) => handleGetResponse(res, ctx, param, requestId, caller),
  },
  // Resuming a stream after a lost connection, with Last-Event-ID (docs/streams/resume.md).
  { method: 'GET', path: '/v1/streams/', param: 'request_id', auth: 'key', handle: handleResumeStream },
  {
    method: 'GET',
    path: '/v1/requests',
    auth: 'key',
    handle: ({ res, ctx, search, requestId, caller }) => handleListRequests(res, ctx, search, requestId, caller),
  },
  {
    method: 'GET',
    path: '/v1/requests/',
    param: 'request_id',
    auth: 'key',
    handle: ({ res, ctx, param, requestId, caller }) => handleGetRequest(res, ctx, param, requestId, caller),
  },
  { method: 'GET', path: '/v1/models', auth: 'key', handle: ({ res, ctx, requestId }) => handleListModels(res, ctx, requestId) },
  // The admin API (docs/governance/keys.md): the master key or an admin key.
  { method: 'POST', path: '/admin/projects', auth: 'admin', handle: handleCreateProject },
  { method: 'GET', path: '/admin/projects', auth: 'admin', handle: handleListProjects },
  { method: 'POST', path: '/admin/keys', auth: 'admin', handle: handleCreateKey },
  { method: 'GET', path: '/admin/keys', auth: 'admin', handle: handleListKeys },
  { method: 'POST', path: '/admin/keys/{key_id}/revoke', auth: 'admin', handle: handleRevokeKey },
  { method: 'POST', path: '/admin/keys/{key_id}/rotate', auth: 'admin', handle: handleRotateKey },
  { method: 'POST', path: '/admin/endpoints', auth: 'admin', handle: handleCreateEndpoint },
  { method: 'GET', path: '/admin/endpoints', auth: 'admin', handle: handleListEndpoints },
  // The console (docs/console.md): its static bundle is open, its data needs an admin's session or key.
  { method: 'GET', path: '/console', auth: 'open', handle: serveConsoleFile },
  { method: 'GET', path: '/console/', auth: 'open', handle: serveConsoleFile },
  { method: 'GET', path: '/console/api/price/', param: 'request_id', auth: 'admin', handle: handlePriceUsed },
  // Prefix routes match in table order: the longer prefix above comes first.
  { method: 'GET', path: '/console/', param: 'file', auth: 'open', handle: serveConsoleFile },
  { method: 'POST', path: '/console/api/login', auth: 'open', handle: handleLogin },
  { method: 'POST', path: '/console/api/logout', auth: 'open', handle: handleLogout },
  { method: 'GET', path: '/console/api/session', auth: 'admin', handle: handleSession },
  { method: 'GET', path: '/console/api/events', auth: 'admin', handle: handleEvents },
  { method: 'GET', path: '/console/api/stats', auth: 'admin', handle: handleStats },
  { method: 'GET', path: '/console/api/usage', auth: 'admin', handle: handleUsage },
];

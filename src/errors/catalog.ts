import { GatewayError } from './gateway-error.ts';

/** The errors sluice raises itself. Upstream errors are mapped by each provider's map-error. */
export const errors = {
  invalidRequest: (message: string, param: string | null = null) =>
    new GatewayError({ code: 'invalid_request', status: 400, type: 'invalid_request_error', message, param }),
  invalidJson: (detail: string) =>
    new GatewayError({
      code: 'invalid_json',
      status: 400,
      type: 'invalid_request_error',
      message: `We could not parse the JSON body of your request: ${detail}`,
    }),
  bodyTooLarge: (limit: number) =>
    new GatewayError({
      code: 'request_too_large',
      status: 413,
      type: 'invalid_request_error',
      message: `Request body exceeds the limit of ${limit} bytes.`,
      // The rest of the body is not read: the connection cannot carry another request.
      headers: { Connection: 'close' },
    }),
  headersTooLarge: () =>
    new GatewayError({
      code: 'headers_too_large',
      status: 431,
      type: 'invalid_request_error',
      message: 'The request headers are larger than this server accepts.',
    }),
  requestTimeout: () =>
    new GatewayError({
      code: 'request_timeout',
      status: 408,
      type: 'invalid_request_error',
      message: 'The request was not received in time.',
    }),
  malformedHttp: () =>
    new GatewayError({
      code: 'malformed_http_request',
      status: 400,
      type: 'invalid_request_error',
      message: 'The HTTP request could not be parsed.',
    }),
  unsupportedMediaType: (contentType: string | undefined, expected = 'application/json') =>
    new GatewayError({
      code: 'unsupported_media_type',
      status: 415,
      type: 'invalid_request_error',
      message: `Content-Type must be ${expected}${contentType ? `, not ${contentType}` : '; the request had none'}.`,
    }),
  hostNotAllowed: (host: string | undefined) =>
    new GatewayError({
      code: 'host_not_allowed',
      status: 403,
      type: 'invalid_request_error',
      message: host
        ? `Host ${host} is not allowed here (see server.allowed_hosts).`
        : 'The request has no Host header; this gateway only answers requests naming an allowed host.',
    }),
  missingHost: () =>
    new GatewayError({
      code: 'missing_host_header',
      status: 400,
      type: 'invalid_request_error',
      message: 'An HTTP/1.1 request must carry a Host header.',
    }),
  corsOriginNotAllowed: (origin: string) =>
    new GatewayError({
      code: 'cors_origin_not_allowed',
      status: 403,
      type: 'invalid_request_error',
      message: `Origin ${origin} is not allowed (see server.cors_origins).`,
    }),
  missingKey: () =>
    new GatewayError({
      code: 'missing_api_key',
      status: 401,
      type: 'authentication_error',
      message: 'You did not provide an API key. Send it as "Authorization: Bearer <key>".',
    }),
  wrongKey: () =>
    new GatewayError({
      code: 'invalid_api_key',
      status: 401,
      type: 'authentication_error',
      message: 'Incorrect API key provided.',
    }),
  modelNotFound: (model: string, reason: string) =>
    new GatewayError({
      code: 'model_not_found',
      status: 404,
      type: 'invalid_request_error',
      param: 'model',
      message: `The model \`${model}\` does not exist or is not available: ${reason}`,
    }),
  routeNotFound: (method: string, path: string) =>
    new GatewayError({
      code: 'route_not_found',
      status: 404,
      type: 'invalid_request_error',
      message: `Unknown route: ${method} ${path}`,
    }),
  requestNotFound: (id: string) =>
    new GatewayError({
      code: 'request_not_found',
      status: 404,
      type: 'not_found_error',
      param: 'request_id',
      message: `No request with id ${id}.`,
    }),
  responseNotFound: (id: string, param: string | null = null) =>
    new GatewayError({
      code: param ? 'previous_response_not_found' : 'response_not_found',
      status: 404,
      type: param ? 'invalid_request_error' : 'not_found_error',
      param,
      message: param ? `Previous response with id '${id}' not found.` : `No response with id '${id}'.`,
    }),
  /** A relayed request's `conversation` is unknown, or another project's (the same answer: it tells nothing). */
  conversationNotFound: (id: string, param: string) =>
    new GatewayError({
      code: 'conversation_not_found',
      status: 404,
      type: 'invalid_request_error',
      param,
      message: `Conversation with id '${id}' not found.`,
    }),
  /** A relayed request's input item names an item that is unknown, or another project's. */
  itemNotFound: (id: string, param: string) =>
    new GatewayError({
      code: 'item_not_found',
      status: 404,
      type: 'invalid_request_error',
      param,
      message: `Item with id '${id}' not found.`,
    }),
  /** A file of the Files API that is unknown, deleted, or another project's (the same answer: it tells nothing). */
  fileNotFound: (id: string, param = 'file_id') =>
    new GatewayError({
      code: 'file_not_found',
      status: 404,
      type: 'not_found_error',
      param,
      message: `No such File object: ${id}`,
    }),
  /** A batch (or message batch) that is unknown, deleted, or another project's. */
  batchNotFound: (id: string, param = 'batch_id') =>
    new GatewayError({
      code: 'batch_not_found',
      status: 404,
      type: 'not_found_error',
      param,
      message: `No such Batch object: ${id}`,
    }),
  /** No provider here serves the Files and Batch API asked for, or the one named is not one of them. */
  batchesUnavailable: (detail: string, param: string | null = null) =>
    new GatewayError({
      code: 'batches_unavailable',
      status: 400,
      type: 'invalid_request_error',
      param,
      message: detail,
    }),
  streamNotFound: (id: string) =>
    new GatewayError({
      code: 'stream_not_found',
      status: 404,
      type: 'not_found_error',
      param: 'request_id',
      message: `No resumable stream with id ${id} (resuming needs stream.resume.enabled, and a stream that started here).`,
    }),
  streamExpired: (id: string, why: string) =>
    new GatewayError({
      code: 'stream_expired',
      status: 410,
      type: 'not_found_error',
      param: 'request_id',
      message: `The stream ${id} is no longer kept for resuming: ${why}.`,
    }),
  streamBufferUnavailable: () =>
    new GatewayError({
      code: 'stream_buffer_unavailable',
      status: 503,
      type: 'server_error',
      message:
        'The stream is not on this instance and Redis, where the other instances keep theirs, is unavailable; try again shortly.',
      headers: { 'retry-after': '1' },
      retryable: true,
    }),
  methodNotAllowed: (method: string, path: string) =>
    new GatewayError({
      code: 'method_not_allowed',
      status: 405,
      type: 'invalid_request_error',
      message: `Method ${method} is not allowed on ${path}`,
    }),
  idleTimeout: (seconds: number) =>
    new GatewayError({
      code: 'stream_idle_timeout',
      status: 504,
      type: 'stream_idle_timeout',
      message: `No data from the upstream for ${seconds}s; the stream was ended.`,
      retryable: true,
      fallbackable: true,
    }),
  deadline: (seconds: number) =>
    new GatewayError({
      code: 'timeout',
      status: 504,
      type: 'timeout_error',
      message: `Request exceeded the deadline of ${seconds}s.`,
      retryable: true,
    }),
  cancelled: (why: string) => new GatewayError({ code: 'cancelled', status: 499, type: 'cancelled', message: why }),
  /**
   * A request still running when the drain time of a shutdown ran out: a server cancellation, so
   * `cancelled` (reference/chat-streaming-full.txt: "client disconnect or server cancellation"),
   * of type server_error (the client did not leave: the ledger's outcome is `error`, and a tier's
   * abandoned_streams policy, which is about clients that leave, does not apply).
   */
  shuttingDown: () =>
    new GatewayError({
      code: 'cancelled',
      status: 503,
      type: 'server_error',
      message: 'sluice is shutting down; the stream was ended before it finished.',
      retryable: true,
    }),
  /**
   * Never sent: the ledger's error of a request that was running when sluice stopped without a
   * drain (a crash, a kill), recorded at the next start from the durable journal.
   */
  gatewayStopped: () =>
    new GatewayError({
      code: 'gateway_stopped',
      status: 503,
      type: 'server_error',
      message:
        'sluice stopped (a crash, a kill, an out-of-memory end) while this request was in progress; recorded at the next start from the ledger journal, with the usage it had reached.',
    }),
  truncated: (provider: string) =>
    new GatewayError({
      code: 'upstream_stream_truncated',
      status: 502,
      type: 'upstream_error',
      provider,
      message: `The ${provider} stream ended before a finish_reason was sent.`,
      retryable: true,
    }),
  malformed: (provider: string, detail: string) =>
    new GatewayError({
      code: 'upstream_malformed_stream',
      status: 502,
      type: 'upstream_error',
      provider,
      message: `The ${provider} stream could not be decoded: ${detail}`,
      retryable: true,
    }),
  connection: (provider: string, detail: string, cause?: unknown) =>
    new GatewayError({
      code: 'upstream_connection_error',
      status: 502,
      type: 'upstream_error',
      provider,
      message: `Could not complete the request to ${provider}: ${detail}`,
      retryable: true,
      fallbackable: true,
      cause,
    }),
  /**
   * Over a per-minute or concurrency limit of the caller's tier (governance/limits); the headers say
   * when to retry. Typed `rate_limit_exceeded` as OpenAI types its own limit refusals; an
   * upstream's 429 keeps the type it was mapped to (upstream-error.ts).
   */
  rateLimited: (message: string, headers: Record<string, string>) =>
    new GatewayError({
      code: 'rate_limit_exceeded',
      status: 429,
      type: 'rate_limit_exceeded',
      message,
      headers,
      retryable: true,
    }),
  /**
   * Too many wrong keys from one client address or for one key id (server/edge/throttle-auth.ts):
   * the wait is the failure bucket's, so a client honouring Retry-After is let in again.
   */
  authThrottled: (scope: 'address' | 'key_id', retryAfterMs: number) => {
    const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
    return new GatewayError({
      code: 'too_many_auth_failures',
      status: 429,
      type: 'rate_limit_exceeded',
      message: `Too many failed authentication attempts ${scope === 'address' ? 'from this client' : 'for this key id'}; retry after ${seconds} s.`,
      headers: { 'retry-after': String(seconds) },
      retryable: true,
    });
  },
  /** A client behind a trusted proxy has server.max_connections_per_client requests in flight (server/edge/requests-per-client.ts). */
  clientRequestLimit: (limit: number) =>
    new GatewayError({
      code: 'too_many_client_requests',
      status: 429,
      type: 'rate_limit_exceeded',
      message: `This client already has ${limit} requests in flight (server.max_connections_per_client); retry when one has ended.`,
      headers: { 'retry-after': '1' },
      retryable: true,
    }),
  /**
   * A USD budget is spent: 429 `insufficient_quota`, as OpenAI answers an exhausted quota. Retrying
   * does not help until the period ends, so `x-should-retry: false` stops the openai SDK's retries.
   */
  quotaExceeded: (message: string, headers: Record<string, string>) =>
    new GatewayError({
      code: 'insufficient_quota',
      status: 429,
      type: 'insufficient_quota',
      message,
      headers: { ...headers, 'x-should-retry': 'false' },
    }),
  /** Redis (the shared limits) did not answer and the tier says fail_closed, or the console asked while it is away. */
  limitsUnavailable: (
    message = 'The rate limiter is unavailable and this tier does not admit requests without it; try again shortly.',
  ) =>
    new GatewayError({
      code: 'limits_unavailable',
      status: 503,
      type: 'server_error',
      message,
      headers: { 'retry-after': '1' },
      retryable: true,
    }),
  /** The deadline of the caller's tier (reference/chat-streaming-full.txt words it this way). */
  tierDeadline: (tier: string, seconds: number) =>
    new GatewayError({
      code: 'timeout',
      status: 504,
      type: 'timeout_error',
      message: `Request timed out after ${seconds}s. Your ${tier} tier has a ${seconds}-second timeout limit.`,
      retryable: true,
    }),
  /** A gateway-issued key whose secret matched but which was revoked (admin API / sluice keys revoke). */
  keyRevoked: () =>
    new GatewayError({
      code: 'api_key_revoked',
      status: 401,
      type: 'authentication_error',
      message: 'This API key has been revoked.',
    }),
  keyExpired: () =>
    new GatewayError({
      code: 'api_key_expired',
      status: 401,
      type: 'authentication_error',
      message: 'This API key has expired.',
    }),
  keyDisabled: () =>
    new GatewayError({
      code: 'api_key_disabled',
      status: 401,
      type: 'authentication_error',
      message: 'This API key is disabled.',
    }),
  /** Gateway-issued keys live in the store; it is not open (yet), or a lookup failed. */
  keyStoreUnavailable: () =>
    new GatewayError({
      code: 'key_store_unavailable',
      status: 503,
      type: 'server_error',
      message: 'API keys cannot be checked right now (the store is unavailable); try again shortly.',
      headers: { 'retry-after': '1' },
      retryable: true,
    }),
  /**
   * A read of the request log or the console's data that the store did not answer: not open yet
   * (down since start-up), refused, reset, or not within store.query_timeout_ms. Retryable.
   */
  storeUnavailable: (why: string) =>
    new GatewayError({
      code: 'store_unavailable',
      status: 503,
      type: 'server_error',
      message: `The request log cannot be read right now: ${why}; try again shortly.`,
      headers: { 'retry-after': '1' },
      retryable: true,
    }),
  /** POST /admin/reconciliations: another run of the provider's holds its lock (this instance or another). */
  reconciliationRunning: (provider: string) =>
    new GatewayError({
      code: 'reconciliation_running',
      status: 409,
      type: 'invalid_request_error',
      param: 'provider',
      message: `A reconciliation of ${provider} is running already (here or on another instance); try again when it ends.`,
    }),
  /** POST /admin/reconciliations: the provider's report API could not be read (the failed run is stored). */
  providerReportUnavailable: (why: string) =>
    new GatewayError({
      code: 'provider_report_unavailable',
      status: 502,
      type: 'upstream_error',
      message: `The provider's report could not be read: ${why}`,
    }),
  /** `serve --workers N`: the workers' metrics could not be gathered for a scrape (telemetry/worker-metrics.ts). */
  metricsUnavailable: (why: string) =>
    new GatewayError({
      code: 'metrics_unavailable',
      status: 503,
      type: 'server_error',
      message: `The metrics of every worker could not be gathered (${why}); try again shortly.`,
      headers: { 'retry-after': '1' },
      retryable: true,
    }),
  /** POST /admin/reload: the config read again was refused (every problem in the message); the running one is kept. */
  configInvalid: (problems: string) =>
    new GatewayError({
      code: 'config_invalid',
      status: 422,
      type: 'invalid_request_error',
      message: `The config was refused and the running config kept: ${problems}`,
    }),
  /** `serve --workers N`: a worker did not answer the reload in time; what it did is in its log. */
  reloadIncomplete: (why: string) =>
    new GatewayError({
      code: 'reload_incomplete',
      status: 503,
      type: 'server_error',
      message: `The config reload did not reach every worker (${why}); reloading again is safe.`,
      headers: { 'retry-after': '1' },
      retryable: true,
    }),
  adminRequired: () =>
    new GatewayError({
      code: 'admin_key_required',
      status: 403,
      type: 'permission_error',
      message: 'The admin API needs the master key or a key created with admin: true.',
    }),
  /** A console user (or an admin key, for users) whose role does not reach this: names the role it needs. */
  roleRequired: (needed: string, role: string) =>
    new GatewayError({
      code: 'role_required',
      status: 403,
      type: 'permission_error',
      message: `This needs the ${needed} role; the caller's role is ${role}.`,
    }),
  /** The identity provider's answer could not sign anyone in (state, code, ID token): says why. */
  ssoFailed: (why: string) =>
    new GatewayError({
      code: 'sso_failed',
      status: 401,
      type: 'authentication_error',
      message: `Single sign-on failed: ${why}.`,
    }),
  /** Signed in at the identity provider, but its claim maps to no role and no project here. */
  ssoNoRole: (claim: string) =>
    new GatewayError({
      code: 'sso_no_role',
      status: 403,
      type: 'permission_error',
      message: `Your identity provider's \`${claim}\` claim maps to no role and no project of this gateway (auth.sso.roles, auth.sso.projects).`,
    }),
  /** The identity provider's discovery document or token endpoint could not be reached. */
  ssoProviderUnavailable: (why: string) =>
    new GatewayError({
      code: 'sso_provider_unavailable',
      status: 502,
      type: 'upstream_error',
      message: `The identity provider could not be reached (${why}); try again shortly.`,
      retryable: true,
    }),
  /** The key's allowed models (as clients name them, or the provider/model they resolve to) do not include this one. */
  modelNotAllowed: (model: string) =>
    new GatewayError({
      code: 'model_not_allowed',
      status: 403,
      type: 'permission_error',
      param: 'model',
      message: `This API key may not use the model \`${model}\`.`,
    }),
  /** An MCP tool, prompt or resource that no upstream server offers (or whose server is down). */
  mcpToolNotFound: (name: string) =>
    new GatewayError({
      code: 'mcp_tool_not_found',
      status: 404,
      type: 'not_found_error',
      param: 'name',
      message: `No MCP tool, prompt or resource \`${name}\` is offered here (tools/list shows what is).`,
    }),
  mcpToolNotAllowed: (name: string) =>
    new GatewayError({
      code: 'mcp_tool_not_allowed',
      status: 403,
      type: 'permission_error',
      param: 'name',
      message: `This API key may not use \`${name}\` (see mcp.grants).`,
    }),
  mcpServerUnavailable: (server: string) =>
    new GatewayError({
      code: 'mcp_server_unavailable',
      status: 503,
      type: 'upstream_error',
      message: `The MCP server \`${server}\` is not reachable now; sluice reconnects it in the background.`,
    }),
  mcpToolTimeout: (name: string, seconds: number) =>
    new GatewayError({
      code: 'mcp_tool_timeout',
      status: 504,
      type: 'timeout_error',
      message: `The tool \`${name}\` did not answer within ${seconds} s (mcp.call_timeout_s); the call was cancelled.`,
    }),
  mcpResultTooLarge: (name: string, limit: number) =>
    new GatewayError({
      code: 'mcp_result_too_large',
      status: 502,
      type: 'upstream_error',
      message: `The result of \`${name}\` is larger than ${limit} bytes (mcp.max_result_bytes); it was not sent.`,
    }),
  /** No such endpoint, or one of another project than the key's (the two are not told apart). */
  endpointNotFound: (project: string, endpoint: string) =>
    new GatewayError({
      code: 'endpoint_not_found',
      status: 404,
      type: 'not_found_error',
      message: `No endpoint ${endpoint} in project ${project} for this key.`,
    }),
  notFound: (what: 'project' | 'key' | 'endpoint' | 'user', id: string, param: string | null = null) =>
    new GatewayError({
      code: `${what}_not_found`,
      status: 404,
      type: 'not_found_error',
      param,
      message: `No ${what} with id ${id}.`,
    }),
  alreadyExists: (what: 'project' | 'key' | 'endpoint', id: string, param: string) =>
    new GatewayError({
      code: `${what}_exists`,
      status: 409,
      type: 'invalid_request_error',
      param,
      message: `A ${what} ${id} already exists.`,
    }),
  /** A key changed while the admin API worked on it (revoked, or rotated by another call). */
  keyChanged: (id: string) =>
    new GatewayError({
      code: 'key_conflict',
      status: 409,
      type: 'invalid_request_error',
      message: `Key ${id} is revoked or was changed by another request; list it again and retry.`,
    }),
  projectHasKeys: (id: string, keys: number) =>
    new GatewayError({
      code: 'project_has_keys',
      status: 409,
      type: 'invalid_request_error',
      param: 'force',
      message: `Project ${id} still has ${keys} live key${keys === 1 ? '' : 's'}: revoke or delete them first, or delete with ?force=true to delete them with it.`,
    }),
} as const;

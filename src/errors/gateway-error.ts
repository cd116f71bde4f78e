/**
 * Every failure in sluice is a GatewayError: data with a stable code, rendered in exactly two
 * places (the HTTP error JSON before a stream starts, the error frame after it has started).
 */
export type OpenAIErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'rate_limit_exceeded'
  | 'insufficient_quota'
  | 'server_error'
  | 'upstream_error'
  | 'timeout_error'
  | 'stream_idle_timeout'
  | 'cancelled';

/**
 * Every code sluice puts in an error, as one closed list: clients, dashboards and the ledger can
 * switch on it. An upstream's own code and type are never put here; they travel beside it
 * (`upstreamCode`, `upstreamType`), except the few codes clients act on whatever the provider
 * (`context_length_exceeded`, `content_filter`, `insufficient_quota`, `rate_limit_exceeded`), which an upstream's
 * code is mapped to when it says the same thing.
 */
export const ERROR_CODES = [
  // The client's request.
  'invalid_request',
  'invalid_json',
  'request_too_large',
  'unsupported_media_type',
  'headers_too_large',
  'request_timeout',
  'malformed_http_request',
  'missing_host_header',
  'host_not_allowed',
  'cors_origin_not_allowed',
  'route_not_found',
  'method_not_allowed',
  'model_not_found',
  'request_not_found',
  'response_not_found',
  'previous_response_not_found',
  'conversation_not_found',
  'item_not_found',
  'file_not_found',
  'batch_not_found',
  'batches_unavailable',
  'stream_not_found',
  'stream_expired',
  'stream_buffer_unavailable',
  'context_length_exceeded',
  'content_filter',
  // Keys, projects, limits and budgets.
  'missing_api_key',
  'invalid_api_key',
  'api_key_revoked',
  'api_key_expired',
  'api_key_disabled',
  'key_store_unavailable',
  'admin_key_required',
  'role_required',
  'user_not_found',
  'sso_failed',
  'sso_no_role',
  'sso_provider_unavailable',
  'model_not_allowed',
  'project_not_found',
  'endpoint_not_found',
  'key_not_found',
  'project_exists',
  'endpoint_exists',
  'key_exists',
  'key_conflict',
  'project_has_keys',
  'rate_limit_exceeded',
  'too_many_auth_failures',
  'too_many_client_requests',
  'insufficient_quota',
  'limits_unavailable',
  // Time and lifecycle.
  'timeout',
  'stream_idle_timeout',
  'cancelled',
  'gateway_stopped',
  // The workers of one gateway (serve --workers N).
  'metrics_unavailable',
  // Reloading the config (SIGHUP, POST /admin/reload).
  'config_invalid',
  'reload_incomplete',
  // The store (SQLite or PostgreSQL) behind the request log and the console.
  'store_unavailable',
  // Reconciling the ledger against the providers' reports (POST /admin/reconciliations).
  'reconciliation_running',
  'provider_report_unavailable',
  // The upstream.
  'upstream_error',
  'upstream_connection_error',
  'upstream_timeout',
  'upstream_overloaded',
  'upstream_authentication_failed',
  'upstream_billing_error',
  'upstream_malformed_stream',
  'upstream_stream_truncated',
  // The MCP gateway (/mcp): a tool call's refusal or failure, as JSON-RPC errors' data.
  'mcp_tool_not_found',
  'mcp_tool_not_allowed',
  'mcp_server_unavailable',
  'mcp_tool_timeout',
  'mcp_result_too_large',
  // A sluice bug.
  'internal_error',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface GatewayErrorInit {
  /** Stable machine code from ERROR_CODES. */
  code: ErrorCode;
  status: number;
  type: OpenAIErrorType;
  message: string;
  param?: string | null;
  /** Worth retrying the same request later (the SDK's own retry logic reads the HTTP status). */
  retryable?: boolean;
  /** Safe to try another target before the first token (routing fallback). */
  fallbackable?: boolean;
  upstreamStatus?: number;
  /** The upstream's own error type and code, as it sent them (kept beside sluice's, never in place of them). */
  upstreamType?: string;
  upstreamCode?: string;
  /** Headers passed on to the client with the HTTP error (retry-after and friends). */
  headers?: Record<string, string>;
  provider?: string;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: OpenAIErrorType;
  readonly param: string | null;
  readonly retryable: boolean;
  readonly fallbackable: boolean;
  readonly upstreamStatus: number | undefined;
  readonly upstreamType: string | undefined;
  readonly upstreamCode: string | undefined;
  readonly headers: Record<string, string>;
  readonly provider: string | undefined;

  constructor(init: GatewayErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'GatewayError';
    this.code = init.code;
    this.status = init.status;
    this.type = init.type;
    this.param = init.param ?? null;
    this.retryable = init.retryable ?? false;
    this.fallbackable = init.fallbackable ?? false;
    this.upstreamStatus = init.upstreamStatus;
    this.upstreamType = init.upstreamType;
    this.upstreamCode = init.upstreamCode;
    this.headers = init.headers ?? {};
    this.provider = init.provider;
  }
}

/** Anything thrown that is not a GatewayError is a sluice bug: say so without leaking internals. */
export function toGatewayError(value: unknown): GatewayError {
  if (value instanceof GatewayError) return value;
  return new GatewayError({
    code: 'internal_error',
    status: 500,
    type: 'server_error',
    message: `sluice internal error: ${value instanceof Error ? value.message : String(value)}`,
    cause: value,
  });
}

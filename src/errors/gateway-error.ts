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
  | 'insufficient_quota'
  | 'server_error'
  | 'upstream_error'
  | 'timeout_error'
  | 'stream_idle_timeout'
  | 'cancelled';

export interface GatewayErrorInit {
  /** Stable machine code, e.g. `model_not_found`, `upstream_rate_limited`. */
  code: string;
  status: number;
  type: OpenAIErrorType;
  message: string;
  param?: string | null;
  /** Worth retrying the same request later (the SDK's own retry logic reads the HTTP status). */
  retryable?: boolean;
  /** Safe to try another target before the first token (routing fallback). */
  fallbackable?: boolean;
  upstreamStatus?: number;
  /** Headers passed on to the client with the HTTP error (retry-after and friends). */
  headers?: Record<string, string>;
  provider?: string;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly code: string;
  readonly status: number;
  readonly type: OpenAIErrorType;
  readonly param: string | null;
  readonly retryable: boolean;
  readonly fallbackable: boolean;
  readonly upstreamStatus: number | undefined;
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

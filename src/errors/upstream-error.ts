import type { IncomingHttpHeaders } from 'node:http';
import { type ErrorCode, GatewayError, type GatewayErrorInit, type OpenAIErrorType } from './gateway-error.ts';

export interface UpstreamErrorDetails {
  provider: string;
  /** The status the error stands for: the upstream's HTTP status, or the one an in-stream error implies. */
  status: number;
  /**
   * The HTTP status the upstream actually answered, when it is not `status`: 200 for an error
   * reported inside a stream (or a 200 body). It is what the ledger and the error's `upstream`
   * say (`upstream_status`); `status` still decides sluice's answer to a client that saw no output.
   */
  httpStatus?: number;
  /** The upstream's own message; an empty one is replaced by a description, never dropped. */
  message: string | undefined;
  upstreamCode?: string | number | null;
  /** The upstream's error type (OpenAI `type`, Anthropic `error.type`, an AWS exception name). */
  upstreamType?: unknown;
  param?: string | null;
  headers?: IncomingHttpHeaders;
}

/** Retry hints the openai SDK obeys, passed on from the upstream as they came. */
const RETRY_HEADERS = ['retry-after', 'retry-after-ms', 'x-should-retry'];

/**
 * One status policy for every provider's HTTP errors:
 * - 400/404/409/413/422: the client's request was wrong; same status, the upstream's message.
 * - 401/403: sluice's own upstream credentials were refused; that is a gateway fault (502), and
 *   saying 401 would make the client blame its own key. 402 (billing) likewise.
 * - 429: rate limited, with Retry-After passed on. 529 (Anthropic overloaded) and 503: 503.
 * - 504/408: 504. Any other 5xx: 502.
 */
export function upstreamHttpError(d: UpstreamErrorDetails): GatewayError {
  const fields = upstreamFields(d);
  // The details come from an untrusted body: a field of the wrong type is ignored, never thrown over.
  const message = typeof d.message === 'string' ? d.message.trim() : '';
  const text = message || `${d.provider} returned HTTP ${d.status} with no error message.`;
  // An in-stream error carries a status the upstream chose: anything but an HTTP error status is a 502.
  const s = isHttpErrorStatus(d.status) ? d.status : 500;
  // Never the upstream's code: `invalid_api_key` on a 502 would still make the client blame its own key.
  if (s === 401 || s === 403)
    return accountRefused(fields, 'upstream_authentication_failed', `${d.provider} refused sluice's credentials: ${text}`);
  // Payment required (Anthropic's billing_error): sluice's upstream account, not the client's request.
  if (s === 402)
    return accountRefused(fields, 'upstream_billing_error', `${d.provider} refused the request for billing reasons: ${text}`);
  if (s === 429) return statusError(fields, 429, 'rate_limit_error', 'rate_limit_exceeded', text, true);
  if (s === 404) return statusError(fields, 404, 'invalid_request_error', 'model_not_found', text, false);
  if (s === 408 || s === 504) return statusError(fields, 504, 'timeout_error', 'upstream_timeout', text, true);
  if (s === 503 || s === 529) return statusError(fields, 503, 'server_error', 'upstream_overloaded', text, true);
  if (s >= 400 && s < 500)
    return statusError(fields, s === 422 ? 400 : s, 'invalid_request_error', 'invalid_request', text, false);
  return statusError(fields, 502, 'upstream_error', 'upstream_error', text, true);
}

/** What every error of the upstream carries, whatever its status: who answered, how, and its hints. */
type UpstreamFields = Required<Pick<GatewayErrorInit, 'provider' | 'upstreamStatus' | 'headers' | 'param'>> &
  Pick<GatewayErrorInit, 'upstreamType' | 'upstreamCode'>;

function upstreamFields(d: UpstreamErrorDetails): UpstreamFields {
  // An empty code is no code: the client's error needs a stable one (found by fuzz/, an upstream sending `"code": ""`).
  const code =
    typeof d.upstreamCode === 'string' || typeof d.upstreamCode === 'number'
      ? String(d.upstreamCode).trim() || undefined
      : undefined;
  return {
    provider: d.provider,
    upstreamStatus: d.httpStatus ?? d.status,
    headers: passedHeaders(d.headers),
    param: typeof d.param === 'string' ? d.param : null,
    upstreamType: typeof d.upstreamType === 'string' && d.upstreamType.trim() ? d.upstreamType.trim() : undefined,
    upstreamCode: code,
  };
}

/** The retry hints, and the upstream's own rate-limit state (OpenAI's x-ratelimit-*-requests/-tokens) to pace on. */
function passedHeaders(upstream: IncomingHttpHeaders | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of RETRY_HEADERS) {
    const value = upstream?.[name];
    if (typeof value === 'string') headers[name] = value;
  }
  for (const [name, value] of Object.entries(upstream ?? {})) {
    if (name.startsWith('x-ratelimit-') && typeof value === 'string') headers[name] = value;
  }
  return headers;
}

/** sluice's own upstream account was refused (credentials, billing): a gateway fault (502), worth another target. */
function accountRefused(
  fields: UpstreamFields,
  code: 'upstream_authentication_failed' | 'upstream_billing_error',
  message: string,
): GatewayError {
  return new GatewayError({ ...fields, status: 502, type: 'upstream_error', code, message, fallbackable: true });
}

/** The error for `status`: the upstream's code when it is one clients act on (SHARED_CODES), else `fallbackCode`. */
function statusError(
  fields: UpstreamFields,
  status: number,
  type: OpenAIErrorType,
  fallbackCode: ErrorCode,
  message: string,
  retryable: boolean,
): GatewayError {
  return new GatewayError({
    ...fields,
    status,
    type,
    code: sharedCode(fields.upstreamCode) ?? sharedCode(fields.upstreamType) ?? fallbackCode,
    message,
    retryable,
    fallbackable: retryable || status === 502,
  });
}

/**
 * The upstream codes that mean the same in sluice's catalog and that clients act on (LangChain and
 * the agents SDKs trim the context on `context_length_exceeded`; `insufficient_quota` must not be
 * retried): an upstream saying one of them keeps it as the code; any other stays in upstreamCode.
 */
const SHARED_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'context_length_exceeded',
  // Azure OpenAI refusing a prompt its content filter flagged: rewording is the fix, not a retry.
  'content_filter',
  'insufficient_quota',
  'rate_limit_exceeded',
]);

function sharedCode(code: string | undefined): ErrorCode | undefined {
  return code !== undefined && SHARED_CODES.has(code) ? (code as ErrorCode) : undefined;
}

/** An integer 4xx or 5xx: the only statuses an upstream error may hand on to the client. */
export function isHttpErrorStatus(status: unknown): status is number {
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599;
}

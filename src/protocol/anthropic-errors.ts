import type { GatewayError } from '../errors/gateway-error.ts';

/**
 * The error types of Anthropic's API, with the HTTP status it answers each with ("Errors" in its
 * API reference). One table for both directions: the surface answers clients by it, the provider
 * reads Anthropic's own errors by it.
 */
export const STATUS_OF_TYPE = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
} as const;

export type AnthropicErrorType = keyof typeof STATUS_OF_TYPE;

/**
 * sluice's failure as Anthropic would have named it. The Anthropic SDK picks its error class by
 * the HTTP status and exposes the type, so both follow Anthropic's table: an overloaded upstream
 * (whichever provider) is `overloaded_error`, a spent budget `billing_error`... An Anthropic
 * upstream's own type is kept when it gave one: the client sees what Anthropic said.
 */
export function anthropicErrorType(error: GatewayError): AnthropicErrorType {
  const upstream = error.upstreamType;
  if (upstream !== undefined && Object.hasOwn(STATUS_OF_TYPE, upstream) && error.provider === 'anthropic') {
    return upstream as AnthropicErrorType;
  }
  switch (error.code) {
    case 'upstream_overloaded':
    // A shutdown past its drain time (catalog.ts: shuttingDown); a client's own cancellation never reaches it.
    case 'cancelled':
    case 'limits_unavailable':
    case 'key_store_unavailable':
      return 'overloaded_error';
    case 'insufficient_quota':
    case 'upstream_billing_error':
      return 'billing_error';
    case 'request_too_large':
      return 'request_too_large';
  }
  const s = error.status;
  if (s === 401) return 'authentication_error';
  if (s === 402) return 'billing_error';
  if (s === 403) return 'permission_error';
  if (s === 404) return 'not_found_error';
  if (s === 429) return 'rate_limit_error';
  if (s === 504) return 'timeout_error';
  if (s >= 400 && s < 500) return 'invalid_request_error';
  return 'api_error';
}

/**
 * The HTTP status of an error before the stream: the one Anthropic uses for the type, except
 * where sluice's own is more precise for a client (405, 408, 415, 431 and the other 4xx keep
 * theirs; only types Anthropic answers with one fixed status take it).
 */
export function anthropicErrorStatus(error: GatewayError): number {
  const type = anthropicErrorType(error);
  if (type === 'invalid_request_error' && error.status >= 400 && error.status < 500) return error.status;
  return STATUS_OF_TYPE[type];
}

/**
 * `{"type":"error","error":{"type":…,"message":…}}`, the body of an HTTP error and the data of an
 * `event: error` frame alike. Anthropic's errors have no `param`: the message names the field.
 */
export function anthropicErrorBody(error: GatewayError): { type: 'error'; error: { type: AnthropicErrorType; message: string } } {
  const param = error.param;
  const message = param && !error.message.includes(param) ? `${param}: ${error.message}` : error.message;
  return { type: 'error', error: { type: anthropicErrorType(error), message } };
}

export function renderAnthropicError(error: GatewayError): string {
  return JSON.stringify(anthropicErrorBody(error));
}

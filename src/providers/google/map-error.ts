import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayError } from '../../errors/gateway-error.ts';
import { upstreamHttpError } from '../../errors/upstream-error.ts';

/** google.rpc.Status as Google APIs send it: `{"error":{"code","message","status","details"}}`. */
interface GoogleStatus {
  code?: unknown;
  message?: unknown;
  status?: unknown;
  details?: unknown;
}

/** HTTP status of each canonical gRPC code, for an in-stream error that carries only its name. */
const HTTP_OF_RPC: Record<string, number> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ABORTED: 409,
  ALREADY_EXISTS: 409,
  RESOURCE_EXHAUSTED: 429,
  CANCELLED: 499,
  UNKNOWN: 500,
  INTERNAL: 500,
  DATA_LOSS: 500,
  UNIMPLEMENTED: 501,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
};

/** The status object, whether bare or (non-SSE stream bodies) wrapped in a one-element array. */
function statusOf(body: unknown): GoogleStatus | undefined {
  const root = Array.isArray(body) ? body[0] : body;
  const error = (root as { error?: unknown } | null | undefined)?.error;
  return error && typeof error === 'object' ? (error as GoogleStatus) : undefined;
}

function toError(
  provider: string,
  status: number,
  error: GoogleStatus | undefined,
  fallback: string,
  headers?: IncomingHttpHeaders,
  httpStatus?: number,
): GatewayError {
  // A bad key is answered with 400 INVALID_ARGUMENT + reason API_KEY_INVALID; it is sluice's
  // credential that failed, not the client's request.
  const details = error?.details;
  const keyRefused = Array.isArray(details) && details.some((d) => d?.reason === 'API_KEY_INVALID');
  return upstreamHttpError({
    provider,
    status: keyRefused ? 401 : status,
    httpStatus,
    message: typeof error?.message === 'string' ? error.message : fallback,
    headers,
  });
}

/** A non-2xx answer from the Gemini API. */
export function mapGoogleError(provider: string, status: number, headers: IncomingHttpHeaders, text: string): GatewayError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return toError(provider, status, statusOf(parsed), text.slice(0, 500), headers);
}

/**
 * An error object inside a 200 stream (`data: {"error":{...}}`), given the status it would have
 * had as an HTTP answer so the pipeline can still send a proper HTTP error before any output.
 */
export function googleStreamError(provider: string, body: unknown): GatewayError {
  const error = statusOf(body);
  const code = typeof error?.code === 'number' && error.code >= 400 && error.code < 600 ? error.code : undefined;
  const named =
    typeof error?.status === 'string' && Object.hasOwn(HTTP_OF_RPC, error.status) ? HTTP_OF_RPC[error.status] : undefined;
  // The stream itself came with a 200: that is the upstream's status the ledger records.
  return toError(provider, code ?? named ?? 502, error, `${provider} reported an error in the stream.`, undefined, 200);
}

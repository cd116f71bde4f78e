import type { GatewayError } from './gateway-error.ts';

/**
 * The error object every surface in the OpenAI family renders: sluice's `type` and `code` (the
 * catalog's), and, when the failure came from an upstream, what the upstream itself said in its
 * own field (`upstream`: its HTTP status, error type and code), so neither overwrites the other.
 */
export function errorObject(err: GatewayError, withParam = true): Record<string, unknown> {
  const out: Record<string, unknown> = { message: err.message, type: err.type };
  if (withParam) out.param = err.param;
  out.code = err.code;
  if (err.upstreamStatus !== undefined || err.upstreamType !== undefined || err.upstreamCode !== undefined) {
    out.upstream = { status: err.upstreamStatus ?? null, type: err.upstreamType ?? null, code: err.upstreamCode ?? null };
  }
  return out;
}

/** The OpenAI error envelope, used for HTTP errors. */
export function renderErrorBody(err: GatewayError): string {
  return JSON.stringify({ error: errorObject(err) });
}

/**
 * The error object of a mid-stream error frame: `{"error":{"message","type","code"}}`.
 * `upstreamType`: the `type` is the upstream's own where it gave one (a stream profile's choice:
 * reference/chat-streaming-usage.txt's `"type":"stream_error"`), sluice's otherwise.
 */
export function renderStreamError(err: GatewayError, upstreamType = false): string {
  const error = errorObject(err, false);
  if (upstreamType && err.upstreamType !== undefined) error.type = err.upstreamType;
  return JSON.stringify({ error });
}

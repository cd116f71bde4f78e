import type { GatewayError } from './gateway-error.ts';

/** The OpenAI error envelope, used for HTTP errors. */
export function renderErrorBody(err: GatewayError): string {
  return JSON.stringify({ error: { message: err.message, type: err.type, param: err.param, code: err.code } });
}

/** The error object of a mid-stream error frame: `{"error":{"message","type","code"}}`. */
export function renderStreamError(err: GatewayError): string {
  return JSON.stringify({ error: { message: err.message, type: err.type, code: err.code } });
}

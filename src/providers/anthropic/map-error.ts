import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayError } from '../../errors/gateway-error.ts';
import { upstreamHttpError } from '../../errors/upstream-error.ts';
import { type AnthropicErrorType, STATUS_OF_TYPE } from '../../protocol/anthropic-errors.ts';

export const PROVIDER = 'anthropic';

/** `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":…}` */
interface AnthropicErrorBody {
  error?: unknown;
}

/** The error object's type and message, where they are strings (the body is untrusted). */
function errorOf(body: unknown): { type?: string; message?: string } {
  const error = body && typeof body === 'object' ? (body as AnthropicErrorBody).error : undefined;
  if (!error || typeof error !== 'object') return {};
  const { type, message } = error as { type?: unknown; message?: unknown };
  return { type: typeof type === 'string' ? type : undefined, message: typeof message === 'string' ? message : undefined };
}

/**
 * A non-2xx answer: the status decides, the error type becomes the code, the message is kept.
 * `provider`: the platform that hosts Claude, when it is not Anthropic's API (Vertex AI).
 */
export function mapAnthropicError(status: number, headers: IncomingHttpHeaders, text: string, provider = PROVIDER): GatewayError {
  const error = parseError(text);
  return upstreamHttpError({
    provider,
    status,
    message: error.message ?? text.slice(0, 500),
    upstreamType: error.type,
    headers,
  });
}

/**
 * An `event: error` inside a 200 stream has no status of its own: it gets the one Anthropic
 * answers that error type with over HTTP, so overloaded is a 503 and rate limits a 429 for a
 * client that has not seen output yet. An unknown type is an upstream fault (500 -> 502).
 */
export function anthropicStreamError(body: unknown): GatewayError {
  const { type, message } = errorOf(body);
  return upstreamHttpError({
    provider: PROVIDER,
    status: type !== undefined && Object.hasOwn(STATUS_OF_TYPE, type) ? STATUS_OF_TYPE[type as AnthropicErrorType] : 500,
    // What Anthropic answered over HTTP: the stream (or body) came with a 200.
    httpStatus: 200,
    message: message || `${PROVIDER} sent a stream error event with no message (${type ?? 'no type'}).`,
    upstreamType: type,
  });
}

function parseError(text: string): { type?: string; message?: string } {
  try {
    return errorOf(JSON.parse(text));
  } catch {
    return {};
  }
}

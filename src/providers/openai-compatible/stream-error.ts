import type { GatewayError } from '../../errors/gateway-error.ts';
import { isHttpErrorStatus, upstreamHttpError } from '../../errors/upstream-error.ts';
import { extractErrorMessage } from './map-error.ts';

/**
 * A generation the upstream ended with `finish_reason: "error"` (OpenRouter does, with or without
 * an `error` object beside it): a failure, not a stop that would be billed as a success.
 */
export function failedGenerationError(provider: string): GatewayError {
  return upstreamHttpError({
    provider,
    status: 502,
    httpStatus: 200,
    message: `${provider} ended the generation with finish_reason "error".`,
  });
}

/**
 * An error reported inside a 200 stream (Groq's `event: error`, OpenRouter's `error` object in a
 * chunk). It carries the status the upstream would have answered with, so that an error before
 * any output still becomes the right HTTP error; the upstream's own status, recorded, is the 200
 * it did answer.
 */
export function streamErrorFrom(provider: string, body: unknown): GatewayError {
  const { message, code, type, param } = extractErrorMessage(body);
  const root = body && typeof body === 'object' ? (body as { error?: unknown }) : {};
  const inner =
    root.error && typeof root.error === 'object' ? (root.error as { status_code?: unknown; code?: unknown }) : undefined;
  const status = isHttpErrorStatus(inner?.status_code) ? inner.status_code : isHttpErrorStatus(inner?.code) ? inner.code : 502;
  return upstreamHttpError({
    provider,
    status,
    httpStatus: 200,
    message,
    upstreamCode: typeof code === 'number' ? null : code,
    upstreamType: type,
    param,
  });
}

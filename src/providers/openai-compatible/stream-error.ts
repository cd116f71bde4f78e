import type { GatewayError } from '../../errors/gateway-error.ts';
import { upstreamHttpError } from '../../errors/upstream-error.ts';
import { extractErrorMessage } from './map-error.ts';

/**
 * An error reported inside a 200 stream (Groq's `event: error`, OpenRouter's `error` object in a
 * chunk). It carries the status the upstream would have answered with, so that an error before
 * any output still becomes the right HTTP error.
 */
export function streamErrorFrom(provider: string, body: unknown): GatewayError {
  const { message, code, param } = extractErrorMessage(body);
  const inner = (body as { error?: { status_code?: unknown; code?: unknown } }).error;
  const status =
    typeof inner?.status_code === 'number'
      ? inner.status_code
      : typeof inner?.code === 'number' && inner.code >= 400 && inner.code < 600
        ? inner.code
        : 502;
  return upstreamHttpError({
    provider,
    status,
    message,
    upstreamCode: typeof code === 'number' ? null : code,
    param,
  });
}

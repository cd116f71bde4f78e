import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayError } from '../../errors/gateway-error.ts';
import { upstreamHttpError } from '../../errors/upstream-error.ts';

interface ErrorBody {
  error?: { message?: string; code?: string | number | null; param?: string | null; type?: string } | string;
  message?: string;
  detail?: string | { msg?: string }[];
}

/** The message of an OpenAI-family error body, whichever of the usual shapes it has. */
export function extractErrorMessage(body: unknown): { message?: string; code?: string | number | null; param?: string | null } {
  if (!body || typeof body !== 'object') return {};
  const b = body as ErrorBody;
  if (typeof b.error === 'string') return { message: b.error };
  if (b.error && typeof b.error === 'object') {
    return { message: b.error.message, code: b.error.code ?? b.error.type ?? null, param: b.error.param };
  }
  if (typeof b.message === 'string') return { message: b.message };
  if (typeof b.detail === 'string') return { message: b.detail };
  if (Array.isArray(b.detail)) return { message: b.detail.map((d) => d.msg).filter(Boolean).join('; ') };
  return {};
}

export function mapOpenAICompatibleError(
  provider: string,
  status: number,
  headers: IncomingHttpHeaders,
  text: string,
): GatewayError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const { message, code, param } = extractErrorMessage(parsed);
  return upstreamHttpError({
    provider,
    status,
    message: message ?? text.slice(0, 500),
    upstreamCode: code,
    param,
    headers,
  });
}

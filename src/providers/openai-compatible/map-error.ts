import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayError } from '../../errors/gateway-error.ts';
import { upstreamHttpError } from '../../errors/upstream-error.ts';

const string = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * The message of an OpenAI-family error body, whichever of the usual shapes it has. The body is
 * untrusted: a field of the wrong type is ignored, never thrown over.
 */
export function extractErrorMessage(body: unknown): {
  message?: string;
  code?: string | number | null;
  type?: string;
  param?: string | null;
} {
  if (!body || typeof body !== 'object') return {};
  const b = body as Record<string, unknown>;
  if (typeof b.error === 'string') return { message: b.error };
  if (b.error && typeof b.error === 'object') {
    const e = b.error as Record<string, unknown>;
    const code = typeof e.code === 'string' || typeof e.code === 'number' ? e.code : null;
    return { message: string(e.message), code, type: string(e.type), param: string(e.param) ?? null };
  }
  if (typeof b.message === 'string') return { message: b.message };
  if (typeof b.detail === 'string') return { message: b.detail };
  if (Array.isArray(b.detail)) {
    const messages = b.detail.map((d) => (d && typeof d === 'object' ? string((d as { msg?: unknown }).msg) : undefined));
    return { message: messages.filter(Boolean).join('; ') };
  }
  return {};
}

/**
 * `explain`: a provider's own reading of the message, given the parsed body and its code (Azure
 * names what its content filter flagged).
 */
export function mapOpenAICompatibleError(
  provider: string,
  status: number,
  headers: IncomingHttpHeaders,
  text: string,
  explain?: (message: string, code: string | number | null | undefined, body: unknown) => string,
): GatewayError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const { message, code, type, param } = extractErrorMessage(parsed);
  const said = message ?? text.slice(0, 500);
  return upstreamHttpError({
    provider,
    status,
    message: explain ? explain(said, code, parsed) : said,
    upstreamCode: code,
    upstreamType: type,
    param,
    headers,
  });
}

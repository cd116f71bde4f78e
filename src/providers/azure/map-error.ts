import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayError } from '../../errors/gateway-error.ts';
import { upstreamHttpError } from '../../errors/upstream-error.ts';
import { extractErrorMessage } from '../openai-compatible/map-error.ts';

/**
 * Azure OpenAI's errors are OpenAI's shape. A prompt its content filter refused (400, code
 * `content_filter`) keeps that code (errors/upstream-error.ts) and says which categories the
 * filter flagged (`innererror.content_filter_result`), so that the client knows to reword it.
 */
export function mapAzureError(provider: string, status: number, headers: IncomingHttpHeaders, text: string): GatewayError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const { message, code, type, param } = extractErrorMessage(parsed);
  const said = message ?? text.slice(0, 500);
  const filtered = code === 'content_filter' ? flaggedCategories(parsed) : undefined;
  return upstreamHttpError({
    provider,
    status,
    message:
      filtered === undefined
        ? said
        : `${provider}'s content filter refused the prompt${filtered.length > 0 ? ` (flagged: ${filtered.join(', ')})` : ''}: ${said}`,
    upstreamCode: code,
    upstreamType: type,
    param,
    headers,
  });
}

/** The categories `innererror.content_filter_result` marks filtered (or detected), in its order. */
function flaggedCategories(body: unknown): string[] {
  const result = (body as { error?: { innererror?: { content_filter_result?: unknown } } } | undefined)?.error?.innererror
    ?.content_filter_result;
  if (!result || typeof result !== 'object') return [];
  return Object.entries(result as Record<string, unknown>)
    .filter(([, verdict]) => {
      const v = verdict as { filtered?: unknown } | null;
      return typeof v === 'object' && v !== null && v.filtered === true;
    })
    .map(([category]) => category);
}

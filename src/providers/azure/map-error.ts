import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayError } from '../../errors/gateway-error.ts';
import { mapOpenAICompatibleError } from '../openai-compatible/map-error.ts';

/**
 * Azure OpenAI's errors are OpenAI's shape. A prompt its content filter refused (400, code
 * `content_filter`) keeps that code (errors/upstream-error.ts) and says which categories the
 * filter flagged (`innererror.content_filter_result`), so that the client knows to reword it.
 */
export function mapAzureError(provider: string, status: number, headers: IncomingHttpHeaders, text: string): GatewayError {
  return mapOpenAICompatibleError(provider, status, headers, text, (message, code, body) => {
    if (code !== 'content_filter') return message;
    const flagged = flaggedCategories(body);
    return `${provider}'s content filter refused the prompt${flagged.length > 0 ? ` (flagged: ${flagged.join(', ')})` : ''}: ${message}`;
  });
}

/** The categories `innererror.content_filter_result` marks filtered, in its order. */
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

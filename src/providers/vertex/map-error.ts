import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayError } from '../../errors/gateway-error.ts';
import { mapAnthropicError } from '../anthropic/map-error.ts';
import { mapGoogleError } from '../google/map-error.ts';

/**
 * Vertex AI answers with Google's error shape (`{"error":{"code","message","status"}}`: quota,
 * permissions, an unknown model), except Claude itself, whose errors come in Anthropic's
 * (`{"type":"error","error":{"type","message"}}`): each is read by its own mapping.
 */
export function mapVertexError(provider: string, status: number, headers: IncomingHttpHeaders, text: string): GatewayError {
  return isAnthropicError(text)
    ? mapAnthropicError(status, headers, text, provider)
    : mapGoogleError(provider, status, headers, text);
}

function isAnthropicError(text: string): boolean {
  try {
    const body = JSON.parse(text) as { type?: unknown } | null;
    return body?.type === 'error';
  } catch {
    return false;
  }
}

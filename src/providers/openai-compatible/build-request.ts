import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import type { UpstreamRequest } from '../../upstream/http-client.ts';
import { convertRequest } from './convert-request.ts';

export interface OpenAICompatibleTarget {
  baseUrl: string;
  apiKey: string | undefined;
  headers: Record<string, string>;
  /** Send `stream_options.include_usage` so the gateway always learns the real usage. */
  streamOptions: boolean;
}

/**
 * The client's body goes upstream as it came (unknown provider options included), with the
 * upstream model name and usage always requested: the client's own `include_usage` only decides
 * what the client sees, never what sluice learns.
 */
export function buildOpenAICompatibleRequest(
  request: CanonicalRequest,
  model: string,
  stream: boolean,
  target: OpenAICompatibleTarget,
): UpstreamRequest {
  const body: Record<string, unknown> = { ...convertRequest(request), model, stream };
  if (stream && target.streamOptions) {
    // The chat surface keeps the client's stream_options in `extra` (include_obfuscation, ...).
    body.stream_options = { ...(body.stream_options as object | null | undefined), include_usage: true };
  } else {
    delete body.stream_options;
  }
  if (!stream) delete body.stream;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
    ...target.headers,
  };
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  return { url: `${target.baseUrl.replace(/\/+$/, '')}/chat/completions`, headers, body: JSON.stringify(body) };
}

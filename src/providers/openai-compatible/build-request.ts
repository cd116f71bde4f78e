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
  const body = chatCompletionsBody(request, model, stream, target.streamOptions);
  return {
    url: `${target.baseUrl.replace(/\/+$/, '')}/chat/completions`,
    headers: openAIHeaders(target, stream),
    body: JSON.stringify(body),
  };
}

/** The Chat Completions body: what every server of the family takes (Azure OpenAI's too, at its own URL). */
export function chatCompletionsBody(
  request: CanonicalRequest,
  model: string,
  stream: boolean,
  streamOptions: boolean,
): Record<string, unknown> {
  const body: Record<string, unknown> = { ...convertRequest(request), model, stream };
  if (stream && streamOptions) {
    // The chat surface keeps the client's stream_options in `extra` (include_obfuscation, ...).
    body.stream_options = { ...(body.stream_options as object | null | undefined), include_usage: true };
  } else {
    delete body.stream_options;
  }
  if (!stream) delete body.stream;
  return body;
}

/** The headers of a call to an OpenAI-compatible server: JSON in, SSE or JSON out, the config's extras, the key. */
export function openAIHeaders(target: OpenAICompatibleTarget, stream: boolean): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
    ...target.headers,
  };
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  return headers;
}

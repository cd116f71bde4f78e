import type { ChatRequest } from '../../protocol/openai-chat/request-schema.ts';
import type { UpstreamRequest } from '../../upstream/http-client.ts';

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
  request: ChatRequest,
  model: string,
  stream: boolean,
  target: OpenAICompatibleTarget,
): UpstreamRequest {
  const body: Record<string, unknown> = { ...request, model, stream, messages: request.messages.map(stripSluiceFields) };
  if (stream && target.streamOptions) {
    body.stream_options = { ...(request.stream_options ?? {}), include_usage: true };
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

/** `reasoning_signature` is sluice's round-trip field for native providers; upstreams never see it. */
function stripSluiceFields(message: ChatRequest['messages'][number]): ChatRequest['messages'][number] {
  if (message.role !== 'assistant' || !('reasoning_signature' in message)) return message;
  const { reasoning_signature: _, ...rest } = message;
  return rest as typeof message;
}

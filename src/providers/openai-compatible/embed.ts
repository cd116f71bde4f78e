import { errors } from '../../errors/catalog.ts';
import type { UpstreamRequest } from '../../upstream/http-client.ts';
import { floatVector, tokenCount } from '../embed-call.ts';
import type { EmbeddingRequest } from '../../protocol/canonical/embedding-request.ts';
import type { EmbeddingResult } from '../types.ts';
import { type OpenAICompatibleTarget, openAIHeaders } from './build-request.ts';

/**
 * `POST {base}/embeddings` with the client's body as sent (its own options included), under the
 * upstream's model name: an OpenAI-compatible server speaks this API itself.
 */
export function buildOpenAICompatibleEmbeddings(
  request: EmbeddingRequest,
  model: string,
  target: OpenAICompatibleTarget,
): UpstreamRequest {
  const body = embeddingsBody(request, model);
  return {
    url: `${target.baseUrl.replace(/\/+$/, '')}/embeddings`,
    headers: openAIHeaders(target, false),
    body: JSON.stringify(body),
  };
}

/** The embeddings body, as OpenAI's API (and Azure OpenAI's, at its own URL) takes it. */
export function embeddingsBody(request: EmbeddingRequest, model: string): Record<string, unknown> {
  const body: Record<string, unknown> = { ...request.extra, model, input: request.rawInput };
  if (request.encodingFormat === 'base64') body.encoding_format = 'base64';
  if (request.dimensions !== undefined) body.dimensions = request.dimensions;
  if (request.user !== undefined) body.user = request.user;
  return body;
}

/**
 * The upstream's `data` put back in input order (by `index`), vectors as sent (floats, or the
 * base64 string the client asked for), and `usage.prompt_tokens`.
 */
export function decodeOpenAICompatibleEmbeddings(provider: string, json: unknown, inputs: number): EmbeddingResult {
  const data = (json as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw errors.malformed(provider, 'embeddings response has no data array');
  const embeddings = Array.from<number[] | string | undefined>({ length: inputs });
  data.forEach((item: { index?: unknown; embedding?: unknown } | null, position) => {
    const index = typeof item?.index === 'number' ? item.index : position;
    if (!Number.isInteger(index) || index < 0 || index >= inputs || embeddings[index] !== undefined) {
      throw errors.malformed(provider, `data[${position}] has index ${String(item?.index)} for ${inputs} inputs`);
    }
    const vector = item?.embedding;
    embeddings[index] = typeof vector === 'string' ? vector : floatVector(provider, vector, `data[${position}].embedding`);
  });
  if (data.length !== inputs) {
    throw errors.malformed(provider, `embeddings response has ${data.length} vectors for ${inputs} inputs`);
  }
  // Every index is set once and in range, and there are as many as inputs: none is missing.
  const vectors = embeddings as (number[] | string)[];
  const usage = (json as { usage?: { prompt_tokens?: unknown } }).usage;
  const inputTokens = tokenCount(usage?.prompt_tokens);
  return inputTokens === undefined ? { embeddings: vectors } : { embeddings: vectors, inputTokens };
}

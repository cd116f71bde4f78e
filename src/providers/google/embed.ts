import { errors } from '../../errors/catalog.ts';
import type { UpstreamRequest } from '../../upstream/http-client.ts';
import { floatVector } from '../embed-call.ts';
import { checkModelId, modelIdRules } from '../model-id.ts';
import type { EmbeddingRequest } from '../../protocol/canonical/embedding-request.ts';
import type { EmbeddingResult } from '../types.ts';
import type { GoogleTarget } from './build-request.ts';
import { paramPolicy } from './params.ts';

/**
 * One input: `models/{id}:embedContent`; several: `:batchEmbedContents`, one request per input
 * (Gemini's own batch, answered in order). `dimensions` is Gemini's `outputDimensionality`.
 * `user` only labels the request for OpenAI's records: nothing to send. Gemini takes text only.
 */
export function buildGeminiEmbeddings(request: EmbeddingRequest, model: string, target: GoogleTarget): UpstreamRequest {
  const texts = request.input.map((one, i) => {
    if (typeof one === 'string') return one;
    // Token ids of another tokenizer mean nothing to Gemini: dropping them would embed nothing.
    throw errors.invalidRequest(
      `${target.name} embeds text only: \`input\` must be a string or an array of strings, not token ids.`,
      request.input.length > 1 ? `input[${i}]` : 'input',
    );
  });
  const extra = Object.keys(request.extra ?? {});
  if (extra.length > 0)
    paramPolicy(target.name, target.dropParams).unsupported(extra[0], 'it is not an OpenAI embeddings parameter Gemini has');
  const base = target.baseUrl.replace(/\/+$/, '');
  const root = /\/v1(alpha|beta)?$/.test(base) ? base : `${base}/v1beta`;
  // A plain id names `models/{id}`; `models/…` and `tunedModels/…` are used as they are (as for chat).
  const [collection, id] = checkModelId(target.name, model, modelIdRules.google).split('/', 2);
  const resource = id === undefined ? `models/${encodeURIComponent(collection)}` : `${collection}/${encodeURIComponent(id)}`;
  const one = (text: string) => ({
    content: { parts: [{ text }] },
    ...(request.dimensions !== undefined ? { outputDimensionality: request.dimensions } : {}),
  });
  const body =
    texts.length === 1
      ? one(texts[0])
      : { requests: texts.map((text) => ({ model: decodeURIComponent(resource), ...one(text) })) };
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (target.apiKey) headers['x-goog-api-key'] = target.apiKey;
  const method = texts.length === 1 ? 'embedContent' : 'batchEmbedContents';
  return { url: `${root}/${resource}:${method}`, headers, body: JSON.stringify(body) };
}

/**
 * `{embedding: {values}}` (embedContent) or `{embeddings: [{values}, ...]}` (batchEmbedContents).
 * The Gemini API reports no token count for embeddings: sluice counts the input itself.
 */
export function decodeGeminiEmbeddings(provider: string, json: unknown, inputs: number): EmbeddingResult {
  const body = json as { embedding?: { values?: unknown }; embeddings?: { values?: unknown }[] } | null;
  if (inputs === 1 && body?.embedding) {
    return { embeddings: [floatVector(provider, body.embedding.values, 'embedding.values')] };
  }
  const list = body?.embeddings;
  if (!Array.isArray(list) || list.length !== inputs) {
    throw errors.malformed(
      provider,
      `embeddings response has ${Array.isArray(list) ? list.length : 'no'} vectors for ${inputs} inputs`,
    );
  }
  return { embeddings: list.map((e, i) => floatVector(provider, e?.values, `embeddings[${i}].values`)) };
}

import type { IncomingHttpHeaders } from 'node:http';
import { errors } from '../../errors/catalog.ts';
import type { UpstreamRequest } from '../../upstream/http-client.ts';
import { floatVector, tokenCount } from '../embed-call.ts';
import { checkModelId, modelIdRules } from '../model-id.ts';
import type { EmbeddingRequest } from '../../protocol/canonical/embedding-request.ts';
import type { EmbeddingResult } from '../types.ts';
import type { BedrockTarget } from './build-request.ts';

/**
 * The embedding model families Bedrock serves through InvokeModel, each with its own body. An id
 * may be a cross-region profile (`us.cohere.embed-v4:0`) or an ARN, so the family is found inside it.
 */
export type BedrockEmbedFamily = 'titan-v1' | 'titan-v2' | 'cohere' | 'cohere-v4' | 'nova';

/** The output sizes Nova Multimodal Embeddings has (`embeddingDimension`). */
const NOVA_DIMENSIONS: ReadonlySet<number> = new Set([256, 384, 1024, 3072]);

export function embedFamily(model: string): BedrockEmbedFamily | undefined {
  if (model.includes('amazon.nova-') && model.includes('multimodal-embeddings')) return 'nova';
  if (model.includes('amazon.titan-embed-text-v2')) return 'titan-v2';
  if (model.includes('amazon.titan-embed-text-v1') || model.includes('amazon.titan-embed-g1-text')) return 'titan-v1';
  if (model.includes('cohere.embed-v4')) return 'cohere-v4';
  if (model.includes('cohere.embed-')) return 'cohere';
  return undefined;
}

/**
 * The InvokeModel calls of one request, unsigned: Titan embeds one text per call (one call per
 * input), Cohere takes them all in `texts`. `dimensions` is Titan v2's `dimensions` and Cohere
 * v4's `output_dimension`; elsewhere a 400 naming it, unless drop_params. Cohere's `input_type`
 * (required by v3, `search_document` when the client sent none) may come in the body.
 */
export function buildBedrockEmbeddings(request: EmbeddingRequest, model: string, target: BedrockTarget): UpstreamRequest[] {
  checkModelId('bedrock', model, modelIdRules.bedrock);
  const family = embedFamily(model);
  if (!family) {
    throw errors.invalidRequest(
      `bedrock/${model} is not an embedding model sluice can call: Bedrock embeddings work with Titan text (amazon.titan-embed-text-v2:0, v1), Cohere (cohere.embed-*) and Nova Multimodal Embeddings (amazon.nova-2-multimodal-embeddings-v1:0, text) models.`,
      'model',
    );
  }
  const texts = request.input.map((one, i) => {
    if (typeof one === 'string') return one;
    throw errors.invalidRequest(
      'bedrock embeds text only: `input` must be a string or an array of strings, not token ids.',
      request.input.length > 1 ? `input[${i}]` : 'input',
    );
  });
  const { input_type: inputType, ...unknown } = request.extra ?? {};
  const refuse = (param: string, why: string) => {
    if (target.dropParams) return;
    throw errors.invalidRequest(
      `bedrock/${model} cannot honour \`${param}\`: ${why}. Remove it, or set drop_params: true for this provider to have sluice drop it.`,
      param,
    );
  };
  const firstUnknown = Object.keys(unknown)[0];
  if (firstUnknown !== undefined) refuse(firstUnknown, 'it is not an OpenAI embeddings parameter this model has');
  if (inputType !== undefined && !family.startsWith('cohere')) refuse('input_type', 'only Cohere embedding models take it');
  const size = outputSize(family, request.dimensions, refuse);
  const call = (body: Record<string, unknown>): UpstreamRequest => ({
    // One path segment whatever the id holds (an ARN's `/` and `:` are percent-encoded, as the AWS SDKs do).
    url: `${target.endpoint.replace(/\/+$/, '')}/model/${encodeURIComponent(model)}/invoke`,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  if (family === 'nova') return texts.map((text) => call(novaBody(text, size)));
  if (family === 'titan-v1' || family === 'titan-v2') {
    return texts.map((inputText) => call(size !== undefined ? { inputText, dimensions: size } : { inputText }));
  }
  const body: Record<string, unknown> = { texts, input_type: inputType ?? 'search_document' };
  if (size !== undefined) body.output_dimension = size;
  return [call(body)];
}

/**
 * The output size to ask for: `dimensions` where the family has a choice of it (Titan v2, Cohere
 * v4, Nova's four sizes); refused otherwise (undefined: dropped under drop_params).
 */
function outputSize(family: BedrockEmbedFamily, dimensions: number | undefined, refuse: (param: string, why: string) => void) {
  if (dimensions === undefined) return undefined;
  if (family !== 'titan-v2' && family !== 'cohere-v4' && family !== 'nova')
    refuse('dimensions', 'this model has one output size');
  else if (family === 'nova' && !NOVA_DIMENSIONS.has(dimensions)) {
    refuse('dimensions', 'Nova Multimodal Embeddings has 256, 384, 1024 or 3072 dimensions');
  } else return dimensions;
  return undefined;
}

/**
 * Nova Multimodal Embeddings, text: one synchronous SINGLE_EMBEDDING per input, for indexing
 * (`GENERIC_INDEX`, what an OpenAI embeddings client asks for). A text past the model's limit is
 * refused (`truncationMode: NONE`), as OpenAI's embedding models refuse it, never cut silently.
 */
function novaBody(text: string, dimensions: number | undefined): Record<string, unknown> {
  return {
    schemaVersion: 'nova-multimodal-embed-v1',
    taskType: 'SINGLE_EMBEDDING',
    singleEmbeddingParams: {
      embeddingPurpose: 'GENERIC_INDEX',
      ...(dimensions !== undefined && { embeddingDimension: dimensions }),
      text: { truncationMode: 'NONE', value: text },
    },
  };
}

/**
 * Titan: `{embedding, inputTextTokenCount}` per call. Nova: `{embeddings: [{embeddingType, embedding}]}` per call. Cohere: `{embeddings: [[...]]}` (or, with
 * `embedding_types`, `{embeddings: {float: [[...]]}}`); its token count is only in the
 * `x-amzn-bedrock-input-token-count` header, which InvokeModel sets for every model.
 */
export function decodeBedrockEmbeddings(
  model: string,
  answers: readonly { json: unknown; headers: IncomingHttpHeaders }[],
  inputs: number,
): EmbeddingResult {
  let tokens: number | undefined = 0;
  const embeddings: number[][] = [];
  for (const { json, headers } of answers) {
    const body = json as { embedding?: unknown; embeddings?: unknown; inputTextTokenCount?: unknown } | null;
    const counted =
      tokenCount(body?.inputTextTokenCount) ?? tokenCount(Number(headers['x-amzn-bedrock-input-token-count'] ?? NaN));
    tokens = tokens === undefined || counted === undefined ? undefined : tokens + counted;
    if (body?.embedding !== undefined) {
      embeddings.push(floatVector('bedrock', body.embedding, 'embedding'));
      continue;
    }
    const list = Array.isArray(body?.embeddings) ? body.embeddings : (body?.embeddings as { float?: unknown } | undefined)?.float;
    if (!Array.isArray(list)) throw errors.malformed('bedrock', `the ${model} response has no embedding or embeddings`);
    list.forEach((item: unknown, i) => {
      // Nova's items are objects holding the vector; Cohere's are the vectors.
      const vector =
        item !== null && typeof item === 'object' && !Array.isArray(item) ? (item as { embedding?: unknown }).embedding : item;
      embeddings.push(floatVector('bedrock', vector, `embeddings[${i}]`));
    });
  }
  if (embeddings.length !== inputs) {
    throw errors.malformed('bedrock', `the ${model} response has ${embeddings.length} vectors for ${inputs} inputs`);
  }
  return tokens === undefined ? { embeddings } : { embeddings, inputTokens: tokens };
}

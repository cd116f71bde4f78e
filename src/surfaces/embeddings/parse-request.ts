import { errors } from '../../errors/catalog.ts';
import type { EmbeddingRequest } from '../../protocol/canonical/embedding-request.ts';
import { schemaError } from '../../protocol/schema-errors.ts';
import { embeddingsRequestSchema, MAX_INPUTS } from './request-schema.ts';

export interface ParsedEmbeddings {
  model: string;
  request: EmbeddingRequest;
}

/** Validates a POST /v1/embeddings body; throws a 400 naming the first offending field. */
export function parseEmbeddingsRequest(body: unknown): ParsedEmbeddings {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw errors.invalidRequest('The request body must be a JSON object.');
  }
  const result = embeddingsRequestSchema.safeParse(body);
  if (!result.success) throw schemaError(result.error);
  const { model, input, encoding_format, dimensions, user, ...extra } = result.data;
  const inputs = listInputs(input);
  if (inputs.length === 0) throw errors.invalidRequest('input: at least one input is required.', 'input');
  if (inputs.length > MAX_INPUTS) throw errors.invalidRequest(`input: at most ${MAX_INPUTS} inputs per request.`, 'input');
  const empty = inputs.findIndex((one) => one.length === 0);
  if (empty >= 0) {
    const param = typeof input === 'string' || (input.length > 0 && typeof input[0] === 'number') ? 'input' : `input[${empty}]`;
    throw errors.invalidRequest(`${param}: an input must not be empty.`, param);
  }
  return {
    model,
    request: {
      input: inputs,
      rawInput: input,
      encodingFormat: encoding_format ?? 'float',
      ...(dimensions !== undefined ? { dimensions } : {}),
      ...(user !== undefined ? { user } : {}),
      ...(Object.keys(extra).length > 0 ? { extra } : {}),
    },
  };
}

/** One entry per vector: a string is one text, an array of numbers one token sequence. */
function listInputs(input: string | string[] | number[] | number[][]): string[] | number[][] {
  if (typeof input === 'string') return [input];
  if (input.length > 0 && typeof input[0] === 'number') return [input as number[]];
  return input as string[] | number[][];
}

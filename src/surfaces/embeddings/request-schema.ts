import { z } from 'zod';

/** OpenAI's own limit on the number of inputs of one request. */
export const MAX_INPUTS = 2048;

const tokenIds = z.array(z.number().int().nonnegative());

/**
 * OpenAI's embeddings body. Unknown fields are kept (loose): OpenAI-compatible servers take their
 * own options here (vLLM's `truncate_prompt_tokens`, Jina's `task`), and they are relayed to them.
 */
export const embeddingsRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.string()), tokenIds, z.array(tokenIds)]),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.number().int().positive().optional(),
  user: z.string().optional(),
});

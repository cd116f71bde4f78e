import { errors } from '../../errors/catalog.ts';
import { schemaError } from '../../protocol/schema-errors.ts';
import { type ChatRequest, chatRequestSchema } from './request-schema.ts';

/** Validates a parsed JSON body; throws a 400 GatewayError naming the first offending param. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw errors.invalidRequest('The request body must be a JSON object.');
  }
  const result = chatRequestSchema.safeParse(body);
  if (!result.success) throw schemaError(result.error);
  const req = result.data;
  if (req.top_logprobs != null && !req.logprobs) {
    throw errors.invalidRequest('top_logprobs requires logprobs to be true.', 'top_logprobs');
  }
  if (req.stream_options && !req.stream) {
    throw errors.invalidRequest('stream_options is only allowed when stream is true.', 'stream_options');
  }
  return req;
}

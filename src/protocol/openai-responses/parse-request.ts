import { errors } from '../../errors/catalog.ts';
import { schemaError } from '../schema-errors.ts';
import { type ResponsesRequest, responsesRequestSchema } from './request-schema.ts';

/** Validates a /v1/responses body; a 400 names the first offending field. */
export function parseResponsesRequest(body: unknown): ResponsesRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw errors.invalidRequest('The request body must be a JSON object.');
  }
  // Hosted tools (web_search, file_search, code_interpreter, ...) run inside OpenAI; sluice cannot
  // run them for other providers, so say that rather than "expected function".
  const tools = (body as { tools?: unknown }).tools;
  if (Array.isArray(tools)) {
    tools.forEach((tool, i) => {
      const type = (tool as { type?: unknown } | null)?.type;
      if (type !== 'function') {
        throw errors.invalidRequest(
          `Tool type '${String(type)}' is not supported: sluice serves function tools only.`,
          `tools[${i}].type`,
        );
      }
    });
  }
  const result = responsesRequestSchema.safeParse(body);
  if (!result.success) throw schemaError(result.error);
  return result.data;
}

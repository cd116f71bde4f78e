import { errors } from '../../errors/catalog.ts';
import { schemaError } from '../../protocol/schema-errors.ts';
import { type MessagesEnabledThinking, type MessagesRequest, messagesRequestSchema } from './request-schema.ts';

/** POST /v1/messages/count_tokens: the Messages body without what only generation needs (`max_tokens`). */
const countTokensSchema = messagesRequestSchema.extend({ max_tokens: messagesRequestSchema.shape.max_tokens.optional() });

/**
 * A count_tokens body, as a Messages request (max_tokens filled in, so the translation is the
 * same); throws a 400 naming the first offending field.
 */
export function parseCountTokensRequest(body: unknown): MessagesRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw errors.invalidRequest('The request body must be a JSON object.');
  }
  const result = countTokensSchema.safeParse(body);
  if (!result.success) throw schemaError(result.error);
  if (result.data.messages.length === 0) throw errors.invalidRequest('messages: at least one message is required.', 'messages');
  return { ...result.data, max_tokens: result.data.max_tokens ?? 1 };
}

/** The thinking budget of `thinking: {type: "enabled"}` (its schema checked it), else undefined. */
export function enabledBudget(req: MessagesRequest): number | undefined {
  return req.thinking?.type === 'enabled' ? (req.thinking as MessagesEnabledThinking).budget_tokens : undefined;
}

/** Validates a parsed JSON body; throws a 400 GatewayError naming the first offending field. */
export function parseMessagesRequest(body: unknown): MessagesRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw errors.invalidRequest('The request body must be a JSON object.');
  }
  const result = messagesRequestSchema.safeParse(body);
  if (!result.success) throw schemaError(result.error);
  const req = result.data;
  if (req.messages.length === 0) throw errors.invalidRequest('messages: at least one message is required.', 'messages');
  const budget = enabledBudget(req);
  if (budget !== undefined && budget >= req.max_tokens) {
    throw errors.invalidRequest('`max_tokens` must be greater than `thinking.budget_tokens`.', 'thinking.budget_tokens');
  }
  return req;
}

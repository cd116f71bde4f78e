import { errors } from '../../errors/catalog.ts';
import { schemaError } from '../../protocol/schema-errors.ts';
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
  rejectHostedChoice(result.data.tool_choice);
  return result.data;
}

/** A tool_choice naming a hosted tool (or allowing one) is refused like the tool itself. */
function rejectHostedChoice(choice: ResponsesRequest['tool_choice']): void {
  if (choice === undefined || typeof choice === 'string' || choice.type === 'function') return;
  if (choice.type === 'allowed_tools') {
    const { tools } = choice as { tools: { type: string }[] };
    const i = tools.findIndex((t) => t.type !== 'function');
    if (i < 0) return;
    throw errors.invalidRequest(
      `Tool type '${tools[i].type}' is not supported: sluice serves function tools only.`,
      `tool_choice.tools[${i}].type`,
    );
  }
  throw errors.invalidRequest(
    `tool_choice '${choice.type}' names a tool sluice does not serve (function tools only).`,
    'tool_choice',
  );
}

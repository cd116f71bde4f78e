import { errors } from '../../errors/catalog.ts';
import { schemaError } from '../../protocol/schema-errors.ts';
import { type ResponsesRequest, responsesRequestSchema } from './request-schema.ts';

/** Validates a /v1/responses body; a 400 names the first offending field. */
export function parseResponsesRequest(sent: unknown): ResponsesRequest {
  if (sent === null || typeof sent !== 'object' || Array.isArray(sent)) {
    throw errors.invalidRequest('The request body must be a JSON object.');
  }
  const body = withoutMcpItems(sent as Record<string, unknown>);
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

/**
 * The MCP items of an earlier response, sent back as input (`mcp_list_tools`, `mcp_call`) are
 * left out: sluice ran those calls itself (docs/api/mcp.md), and the model's answer from them is
 * in the message items.
 */
function withoutMcpItems(body: Record<string, unknown>): Record<string, unknown> {
  const input = body.input;
  if (!Array.isArray(input) || !input.some(isMcpItem)) return body;
  return { ...body, input: input.filter((item) => !isMcpItem(item)) };
}

function isMcpItem(item: unknown): boolean {
  const type = (item as { type?: unknown } | null)?.type;
  return type === 'mcp_list_tools' || type === 'mcp_call';
}

import { z } from 'zod';
import { errors } from '../errors/catalog.ts';
import { schemaError } from '../protocol/schema-errors.ts';

/** One `{"type": "mcp"}` tool of a model request: a server of `mcp.servers`, and the tools of it the request allows. */
export interface McpToolEntry {
  server: string;
  /** The server's own tool names the request allows (`allowed_tools`); undefined: all of them. */
  allowed: readonly string[] | undefined;
  /** Where it is in the body (`tools[2]`), for the errors that name it. */
  path: string;
}

/**
 * OpenAI's hosted MCP tool (the Responses API's `{"type": "mcp"}`), as far as sluice serves it:
 * a server named by its label in sluice's config, never a URL or a connector of the client's
 * (strict: `server_url`, `connector_id`, `headers`, `authorization` are 400s naming them), and no
 * approvals (sluice runs the calls it offers; the caller's grants decide what it may call).
 */
const mcpToolSchema = z.strictObject({
  type: z.literal('mcp'),
  server_label: z.string().min(1),
  server_description: z.string().nullable().optional(),
  allowed_tools: z
    .union([z.array(z.string()), z.strictObject({ tool_names: z.array(z.string()).optional() })])
    .nullable()
    .optional(),
  require_approval: z.literal('never').nullable().optional(),
});

/**
 * Takes the `{"type": "mcp"}` entries out of a chat completion's or a Responses request's `tools`
 * (sluice runs them: src/mcp/tool-loop.ts), validated, each naming a server of `servers`. The
 * body keeps the client's own tools; `tools` is dropped when nothing else is left. A bad entry is
 * a 400 naming its field (`tools[1].server_label`).
 */
export function takeMcpTools(body: unknown, servers: readonly string[]): { body: unknown; entries: McpToolEntry[] } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { body, entries: [] };
  const fields = body as Record<string, unknown>;
  const tools = fields.tools;
  if (!Array.isArray(tools) || !tools.some(isMcp)) return { body, entries: [] };
  const entries: McpToolEntry[] = [];
  const others: unknown[] = [];
  tools.forEach((tool, i) => {
    if (!isMcp(tool)) return void others.push(tool);
    const result = mcpToolSchema.safeParse(tool);
    if (!result.success) {
      throw schemaError(new z.ZodError(result.error.issues.map((issue) => ({ ...issue, path: ['tools', i, ...issue.path] }))));
    }
    const { server_label: server, allowed_tools: allowed } = result.data;
    if (!servers.includes(server)) {
      throw errors.invalidRequest(
        `MCP server '${server}' is not one of sluice's (mcp.servers): ${servers.length ? servers.join(', ') : 'none is configured'}.`,
        `tools[${i}].server_label`,
      );
    }
    entries.push({ server, allowed: Array.isArray(allowed) ? allowed : allowed?.tool_names, path: `tools[${i}]` });
  });
  const { tools: _tools, ...rest } = fields;
  return { body: others.length > 0 ? { ...rest, tools: others } : rest, entries };
}

function isMcp(tool: unknown): boolean {
  return tool !== null && typeof tool === 'object' && (tool as { type?: unknown }).type === 'mcp';
}

import { z } from 'zod';

/**
 * A server's name prefixes its tools (`github__create_issue`): letters, digits, `-` and single `_`,
 * so that the first `__` of a prefixed name is always where the server's name ends.
 */
export const MCP_SERVER_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$/;

const oauthSchema = z.strictObject({
  token_url: z.url().describe('The token endpoint sluice asks for an access token (the client credentials grant).'),
  client_id: z.string().min(1).describe('The client id sent to the token endpoint.'),
  client_secret: z.string().describe('The client secret sent to the token endpoint (use `${VAR}`).'),
  scope: z.string().optional().describe('The scope asked for, when the token endpoint wants one.'),
  audience: z.string().optional().describe('The `audience` parameter, for token endpoints that need one.'),
});

const mcpServerSchema = z
  .strictObject({
    url: z.url().optional().describe("A Streamable HTTP server: its MCP endpoint's URL (`https://mcp.example.com/mcp`)."),
    headers: z
      .record(z.string(), z.string())
      .default({})
      .describe('HTTP server: headers sent with every request to it (an API key header, a tenant id).'),
    bearer_token: z
      .string()
      .optional()
      .describe('HTTP server: sent as `Authorization: Bearer …` (use `${VAR}`); empty sends none.'),
    oauth: oauthSchema
      .optional()
      .describe('HTTP server: an OAuth access token fetched by sluice (client credentials), cached until it expires.'),
    command: z
      .string()
      .min(1)
      .optional()
      .describe('A local stdio server: the program sluice starts (and restarts when it exits).'),
    args: z.array(z.string()).default([]).describe("Stdio server: the program's arguments."),
    env: z
      .record(z.string(), z.string())
      .default({})
      .describe("Stdio server: environment variables added to a minimal environment (PATH, HOME, …), not sluice's own."),
    cwd: z.string().optional().describe("Stdio server: the program's working directory (else sluice's)."),
    call_timeout_s: z
      .number()
      .positive()
      .optional()
      .describe("This server's tool calls' timeout, in place of mcp.call_timeout_s."),
  })
  .superRefine((server, ctx) => {
    if ((server.url === undefined) === (server.command === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'needs exactly one of `url` (Streamable HTTP) or `command` (stdio)' });
    }
    if (server.bearer_token && server.oauth) {
      ctx.addIssue({ code: 'custom', path: ['oauth'], message: 'and bearer_token both set the Authorization header: keep one' });
    }
  });

const grantSchema = z.strictObject({
  tools: z
    .array(z.string().min(1))
    .min(1)
    .describe(
      'What the grant allows: prefixed tool names (`github__create_issue`), `server__*` (all of a server, with its prompts and resources) or `*`.',
    ),
  project: z.string().min(1).optional().describe("Applies only to this project's keys (a project id)."),
  endpoint: z
    .string()
    .min(1)
    .optional()
    .describe("Applies only through this endpoint's route, `/{project}/{endpoint}/mcp` (the endpoint's name)."),
  key: z.string().min(1).optional().describe('Applies only to this key (a key id).'),
  tier: z.string().min(1).optional().describe('Applies only to keys of this tier.'),
});

export const mcpSchema = z
  .strictObject({
    servers: z
      .record(z.string().regex(MCP_SERVER_NAME, 'must be letters, digits, - and single _').max(40), mcpServerSchema)
      .default({})
      .describe('Upstream MCP servers by name; the name prefixes their tools and prompts (`name__tool`).'),
    call_timeout_s: z
      .number()
      .positive()
      .default(60)
      .describe('A tool call without an answer by then is answered with a JSON-RPC error (mcp_tool_timeout).'),
    max_result_bytes: z
      .number()
      .int()
      .positive()
      .default(1_048_576)
      .describe("A tool call's result larger than this (JSON bytes) is refused with a JSON-RPC error (mcp_result_too_large)."),
    restart_initial_ms: z
      .number()
      .int()
      .positive()
      .default(500)
      .describe("The wait before reconnecting a server that failed (a stdio server's restart); doubled each failure."),
    restart_max_ms: z.number().int().positive().default(30_000).describe('The longest wait between reconnections.'),
    session_idle_s: z
      .number()
      .positive()
      .default(3600)
      .describe("A client's MCP session unused this long is closed (its next request gets 404 and starts again)."),
    max_steps: z
      .number()
      .int()
      .min(2)
      .max(64)
      .default(8)
      .describe(
        'A chat completion or Responses request naming `{"type": "mcp"}` tools: at most this many model calls; an answer still calling tools then ends there.',
      ),
    default_tools: z
      .array(z.string().min(1))
      .default(['*'])
      .describe('What a caller no grant applies to may call (patterns as in grants); `[]`: nothing.'),
    grants: z
      .array(grantSchema)
      .default([])
      .describe(
        'Who may call what: a grant applies when every condition it names holds; a caller may call what its grants allow.',
      ),
  })
  .prefault({})
  .describe('The MCP gateway, /mcp: upstream MCP servers behind one endpoint (docs/api/mcp.md).');

export type McpConfig = z.infer<typeof mcpSchema>;
export type McpServerConfig = z.infer<typeof mcpServerSchema>;
export type McpGrant = z.infer<typeof grantSchema>;

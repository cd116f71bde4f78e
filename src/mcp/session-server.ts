import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  GetPromptResultSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  ReadResourceResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { errors } from '../errors/catalog.ts';
import { toMcpError } from './json-rpc-error.ts';
import { callTool, type ToolCallDeps, type ToolCallScope } from './tool-call.ts';
import type { UpstreamServer } from './upstream-server.ts';

const SERVER_INFO = { name: 'sluice', version: '1' };
/** A prompt or a resource read: the client's own request, with the tool calls' default timeout. */
const READ_TIMEOUT_MS = 60_000;

/**
 * The MCP server one client session talks to: the hub's offer as this session's caller may see
 * it (tools/list shows only what it may call), its calls checked and forwarded. `scope()` is read
 * on each request, so that a reloaded config's grants and timeouts apply to sessions already open.
 */
export function createSessionServer(scope: () => ToolCallScope, deps: ToolCallDeps): Server {
  const { hub } = deps;
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true } },
    instructions: 'Tools of several MCP servers, each prefixed with its server name (server__tool), through sluice.',
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: hub.tools(scope().access) }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => callTool(request, extra, scope(), deps));
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: hub.prompts(scope().access) }));
  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const found = hub.prompt(request.params.name);
    if (!found || !scope().access.server(found.server.name)) throw toMcpError(errors.mcpToolNotFound(request.params.name));
    const client = connected(found.server);
    return client.request({ method: 'prompts/get', params: { ...request.params, name: found.name } }, GetPromptResultSchema, {
      signal: extra.signal,
      timeout: READ_TIMEOUT_MS,
    });
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: hub.resources(scope().access) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: hub.templates(scope().access) }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const owner = hub.resource(request.params.uri);
    if (!owner || !scope().access.server(owner.name)) throw toMcpError(errors.mcpToolNotFound(request.params.uri));
    return connected(owner).request({ method: 'resources/read', params: request.params }, ReadResourceResultSchema, {
      signal: extra.signal,
      timeout: READ_TIMEOUT_MS,
    });
  });
  return server;
}

function connected(server: UpstreamServer) {
  const client = server.connected;
  if (!client) throw toMcpError(errors.mcpServerUnavailable(server.name));
  return client;
}

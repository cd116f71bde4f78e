import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpListedTool } from '../protocol/canonical/events.ts';
import type { CanonicalFunctionTool } from '../protocol/canonical/request.ts';
import type { Access } from './grants.ts';
import type { McpToolEntry } from './mcp-tool-entries.ts';

/** A tool offered to the model: its server and the server's own name for it. */
export interface OfferedTool {
  server: string;
  name: string;
}

/** What a model request is offered of its MCP tools. */
export interface ModelToolsOffer {
  /** The function tools the model gets: the gateway's prefixed names, the servers' input schemas. */
  functions: CanonicalFunctionTool[];
  /** Each server named, with the tools listed of it (its own names): Responses' `mcp_list_tools` items. */
  listed: { server: string; tools: McpListedTool[] }[];
  /** A prefixed name the model may call, to its tool. */
  names: Map<string, OfferedTool>;
}

/** What the offer reads of the hub (McpHub): the tools a caller may call, and whose each is. */
export interface ToolSource {
  tools(access: Access): Tool[];
  tool(prefixed: string): { server: { name: string }; name: string } | undefined;
}

/**
 * The tools of the servers a request names, as /mcp lists them to the same caller (its grants
 * applied: a tool it may not call is not offered), narrowed to each entry's `allowed_tools`. A
 * server that is down offers nothing. Each becomes a function tool under its prefixed name, so
 * that any provider with function calling serves it.
 */
export function offerTools(source: ToolSource, access: Access, entries: readonly McpToolEntry[]): ModelToolsOffer {
  const offer: ModelToolsOffer = { functions: [], listed: [], names: new Map() };
  const mayCall = source.tools(access);
  for (const entry of entries) {
    const listed: McpListedTool[] = [];
    for (const tool of mayCall) {
      const found = source.tool(tool.name);
      if (!found || found.server.name !== entry.server || offer.names.has(tool.name)) continue;
      if (entry.allowed && !entry.allowed.includes(found.name)) continue;
      offer.names.set(tool.name, { server: entry.server, name: found.name });
      const described = tool.description ? { description: tool.description } : {};
      listed.push({ name: found.name, ...described, inputSchema: tool.inputSchema });
      offer.functions.push({
        type: 'function',
        function: { name: tool.name, ...described, parameters: tool.inputSchema },
      });
    }
    offer.listed.push({ server: entry.server, tools: listed });
  }
  return offer;
}

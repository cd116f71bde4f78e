import type { Caller } from '../admission/admission.ts';
import type { McpConfig, McpGrant } from '../config/mcp-schema.ts';

/** Where a caller reaches the gateway from: `/mcp`, or a project's endpoint `/{project}/{endpoint}/mcp`. */
export interface McpPlace {
  endpoint: string | null;
}

/** What one caller may use, decided once per session from the grants in force. */
export interface Access {
  /** May call this tool (its prefixed name) of this server. */
  tool(server: string, prefixed: string): boolean;
  /** May read this server's prompts and resources: a pattern grants the whole server (`server__*`, `*`). */
  server(server: string): boolean;
}

const EVERYTHING: Access = { tool: () => true, server: () => true };

/**
 * The tools a caller may call: the union of the patterns of every grant that applies to it (one
 * whose every named condition holds: project, endpoint, key, tier), or `default_tools` when none
 * does. The master key (no project, no key) may call everything. A pattern is a prefixed name,
 * or ends in `*` to match every name that starts with what comes before it.
 */
export function accessOf(config: Pick<McpConfig, 'grants' | 'default_tools'>, caller: Caller, place: McpPlace): Access {
  if (caller.keyId === null && caller.projectId === null) return EVERYTHING;
  const applying = config.grants.filter((grant) => applies(grant, caller, place));
  const patterns = applying.length > 0 ? applying.flatMap((grant) => grant.tools) : config.default_tools;
  return {
    tool: (_server, prefixed) => patterns.some((pattern) => matches(pattern, prefixed)),
    server: (server) => patterns.some((pattern) => pattern.endsWith('*') && `${server}__`.startsWith(pattern.slice(0, -1))),
  };
}

function applies(grant: McpGrant, caller: Caller, place: McpPlace): boolean {
  if (grant.project !== undefined && grant.project !== caller.projectId) return false;
  if (grant.endpoint !== undefined && grant.endpoint !== place.endpoint) return false;
  if (grant.key !== undefined && grant.key !== caller.keyId) return false;
  if (grant.tier !== undefined && grant.tier !== caller.tier) return false;
  return true;
}

function matches(pattern: string, name: string): boolean {
  return pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : pattern === name;
}

import type { Prompt, Resource, ResourceTemplate, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpConfig } from '../config/mcp-schema.ts';
import type { Access } from './grants.ts';
import { type McpLog, UpstreamServer } from './upstream-server.ts';

/** A prefixed name found: the server that offers it and the server's own name for it. */
export interface Found {
  server: UpstreamServer;
  name: string;
}

/**
 * The upstream MCP servers of the config, offered as one: every server's tools and prompts under
 * its prefix, the resources of every server (each read from the server that listed it). A server
 * that is down offers nothing until it is back. Built once per process (a reload keeps it).
 */
export class McpHub {
  readonly servers: UpstreamServer[];
  private readonly listeners = new Set<() => void>();

  constructor(config: Pick<McpConfig, 'servers' | 'restart_initial_ms' | 'restart_max_ms'>, log: McpLog) {
    const deps = {
      log,
      changed: () => {
        for (const listener of this.listeners) listener();
      },
      initialMs: config.restart_initial_ms,
      maxMs: config.restart_max_ms,
    };
    this.servers = Object.entries(config.servers).map(([name, server]) => new UpstreamServer(name, server, deps));
  }

  start(): void {
    for (const server of this.servers) server.start();
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await Promise.all(this.servers.map((server) => server.close()));
  }

  /** Told when any server's offer changes; returns how to stop being told. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  tools(access: Access): Tool[] {
    return this.servers.flatMap((s) => s.offer.tools.filter((tool) => access.tool(s.name, tool.name)));
  }

  prompts(access: Access): Prompt[] {
    return this.servers.flatMap((s) => (access.server(s.name) ? s.offer.prompts : []));
  }

  resources(access: Access): Resource[] {
    return this.servers.flatMap((s) => (access.server(s.name) ? s.offer.resources : []));
  }

  templates(access: Access): ResourceTemplate[] {
    return this.servers.flatMap((s) => (access.server(s.name) ? s.offer.templates : []));
  }

  tool(prefixed: string): Found | undefined {
    return this.named(prefixed, (s) => s.offer.toolNames);
  }

  prompt(prefixed: string): Found | undefined {
    return this.named(prefixed, (s) => s.offer.promptNames);
  }

  /**
   * The server of a resource's URI: the first (in config order) that listed it, else the first
   * with a template whose fixed start the URI has.
   */
  resource(uri: string): UpstreamServer | undefined {
    return (
      this.servers.find((s) => s.offer.resources.some((r) => r.uri === uri)) ??
      this.servers.find((s) => s.offer.templates.some((t) => uri.startsWith(t.uriTemplate.split('{')[0])))
    );
  }

  /** Each server's state, for /readyz. */
  status(): Record<string, { state: string; reason?: string; tools: number }> {
    return Object.fromEntries(
      this.servers.map((s) => [
        s.name,
        { state: s.state, ...(s.reason ? { reason: s.reason } : {}), tools: s.offer.tools.length },
      ]),
    );
  }

  private named(prefixed: string, names: (s: UpstreamServer) => Map<string, string>): Found | undefined {
    for (const server of this.servers) {
      const name = names(server).get(prefixed);
      if (name !== undefined) return { server, name };
    }
    return undefined;
  }
}

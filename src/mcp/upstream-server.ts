import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type Prompt,
  PromptListChangedNotificationSchema,
  type Resource,
  ResourceListChangedNotificationSchema,
  type ResourceTemplate,
  type Tool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../config/mcp-schema.ts';
import { ClientCredentials } from './oauth-token.ts';
import { prefixNames } from './prefixed-names.ts';

/** What sluice tells the log of its upstream MCP servers. */
export interface McpLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface UpstreamDeps {
  log: McpLog;
  /** The server's tools, prompts or resources changed (it came up, went down, or said so). */
  changed: () => void;
  initialMs: number;
  maxMs: number;
}

/** What a server offers, with the names clients see. */
export interface Offer {
  tools: Tool[];
  prompts: Prompt[];
  resources: Resource[];
  templates: ResourceTemplate[];
  /** Prefixed name -> the server's own name. */
  toolNames: Map<string, string>;
  promptNames: Map<string, string>;
}

const NOTHING: Offer = { tools: [], prompts: [], resources: [], templates: [], toolNames: new Map(), promptNames: new Map() };
const CLIENT_INFO = { name: 'sluice', version: '1' };
/**
 * Connecting and listing: a server that takes longer is down for now (and retried). Generous, as
 * a stdio server's first start may install it (`npx -y ...`) or load for seconds on a busy host.
 */
const CONNECT_TIMEOUT_MS = 30_000;

/**
 * One upstream MCP server: sluice's SDK Client to it, over Streamable HTTP or stdio (a child
 * process sluice starts). Whatever ends the connection (the child exits, an HTTP call fails to
 * connect) marks it down, hides its offer and reconnects it after a backoff that doubles up to
 * `maxMs`; the others are not touched.
 */
export class UpstreamServer {
  readonly name: string;
  state: 'connecting' | 'up' | 'down' = 'connecting';
  reason = 'starting';
  offer: Offer = NOTHING;
  private client: Client | undefined;
  private failures = 0;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly config: McpServerConfig;
  private readonly deps: UpstreamDeps;
  private readonly token: ClientCredentials | undefined;

  constructor(name: string, config: McpServerConfig, deps: UpstreamDeps) {
    this.name = name;
    this.config = config;
    this.deps = deps;
    this.token = config.oauth && new ClientCredentials(config.oauth);
  }

  start(): void {
    void this.connect();
  }

  /** The connected client, for a call; undefined while the server is down. */
  get connected(): Client | undefined {
    return this.state === 'up' ? this.client : undefined;
  }

  /** A call failed in a way that says the connection is gone (not a tool's own error). */
  failed(reason: string): void {
    const client = this.client;
    if (!client) return;
    this.lost(reason);
    void client.close().catch(() => {});
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => {});
  }

  private async connect(): Promise<void> {
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const refresh = () => void this.refresh(client).catch((err: unknown) => this.failedOn(client, err));
    client.setNotificationHandler(ToolListChangedNotificationSchema, refresh);
    client.setNotificationHandler(PromptListChangedNotificationSchema, refresh);
    client.setNotificationHandler(ResourceListChangedNotificationSchema, refresh);
    client.onclose = () => {
      if (this.client === client) this.lost('the connection closed');
    };
    this.client = client;
    try {
      await client.connect(this.transport(), { timeout: CONNECT_TIMEOUT_MS });
      await this.refresh(client);
    } catch (err) {
      this.failedOn(client, err);
      return;
    }
    if (this.client !== client || this.closed) return;
    this.failures = 0;
    this.state = 'up';
    this.reason = '';
    const { tools, prompts, resources } = this.offer;
    this.deps.log.info(
      { mcp_server: this.name, tools: tools.length, prompts: prompts.length, resources: resources.length },
      'mcp server up',
    );
    this.deps.changed();
  }

  private failedOn(client: Client, err: unknown): void {
    if (this.client !== client) return;
    this.lost((err as Error).message ?? String(err));
    void client.close().catch(() => {});
  }

  private lost(reason: string): void {
    this.client = undefined;
    if (this.closed) return;
    const wasUp = this.state === 'up';
    this.state = 'down';
    this.reason = reason;
    this.offer = NOTHING;
    const delay = Math.min(this.deps.maxMs, this.deps.initialMs * 2 ** Math.min(this.failures, 20));
    this.failures++;
    this.deps.log.warn({ mcp_server: this.name, reason, retry_ms: delay }, 'mcp server down: its tools are hidden');
    if (wasUp) this.deps.changed();
    clearTimeout(this.retry);
    this.retry = setTimeout(() => void this.connect(), delay);
    this.retry.unref();
  }

  /** Reads the server's whole offer (every page) and names it for clients. */
  private async refresh(client: Client): Promise<void> {
    const can = client.getServerCapabilities() ?? {};
    const options = { timeout: CONNECT_TIMEOUT_MS };
    const tools = can.tools
      ? await pages(
          (cursor) => client.listTools({ cursor }, options),
          (r) => r.tools,
        )
      : [];
    const prompts = can.prompts
      ? await pages(
          (cursor) => client.listPrompts({ cursor }, options),
          (r) => r.prompts,
        )
      : [];
    const resources = can.resources
      ? await pages(
          (cursor) => client.listResources({ cursor }, options),
          (r) => r.resources,
        )
      : [];
    const templates = can.resources
      ? await pages(
          (cursor) => client.listResourceTemplates({ cursor }, options),
          (r) => r.resourceTemplates,
        )
      : [];
    const toolNames = prefixNames(
      this.name,
      tools.map((t) => t.name),
    );
    const promptNames = prefixNames(
      this.name,
      prompts.map((p) => p.name),
    );
    this.offer = {
      tools: tools.map((t) => ({ ...t, name: toolNames.get(t.name) ?? t.name })),
      prompts: prompts.map((p) => ({ ...p, name: promptNames.get(p.name) ?? p.name })),
      resources,
      templates,
      toolNames: invert(toolNames),
      promptNames: invert(promptNames),
    };
    if (this.state === 'up') this.deps.changed();
  }

  private transport(): Transport {
    const config = this.config;
    if (config.command !== undefined) {
      const transport = new StdioClientTransport({
        command: config.command,
        args: config.args,
        env: { ...getDefaultEnvironment(), ...config.env },
        cwd: config.cwd,
        stderr: 'pipe',
      });
      if (transport.stderr) this.logLines(transport.stderr as Readable);
      return transport;
    }
    const headers: Record<string, string> = { ...config.headers };
    if (config.bearer_token) headers.authorization = `Bearer ${config.bearer_token}`;
    const token = this.token;
    const fetchWithToken: typeof fetch = async (url, init) => {
      const withHeaders = new Headers(init?.headers);
      if (token) withHeaders.set('authorization', `Bearer ${await token.get()}`);
      const res = await fetch(url, { ...init, headers: withHeaders });
      if (res.status === 401) token?.forget();
      return res;
    };
    return new StreamableHTTPClientTransport(new URL(config.url ?? ''), { requestInit: { headers }, fetch: fetchWithToken });
  }

  /** A stdio server's stderr, line by line, in sluice's log. */
  private logLines(stream: Readable): void {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) this.deps.log.info({ mcp_server: this.name, stderr: line }, 'mcp server stderr');
    });
  }
}

async function pages<R extends { nextCursor?: string }, T>(
  list: (cursor: string | undefined) => Promise<R>,
  items: (page: R) => T[],
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  // Bounded: a server whose cursors never end cannot hold the listing forever.
  for (let page = 0; page < 100; page++) {
    const result = await list(cursor);
    all.push(...items(result));
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return all;
}

function invert(names: Map<string, string>): Map<string, string> {
  return new Map([...names].map(([own, prefixed]) => [prefixed, own]));
}

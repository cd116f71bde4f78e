import type { McpConfig } from '../config/mcp-schema.ts';
import type { McpGateway, McpRequest } from './mcp-gateway.ts';
import type { ToolCallDeps } from './tool-call.ts';
import type { McpLog } from './upstream-server.ts';

type ServerStatus = ReturnType<McpGateway['hub']['status']>;

/**
 * The MCP gateway, loaded when it is first needed: at start when mcp.servers names a server,
 * else at the first /mcp request. The MCP SDK (and the zod it brings) adds ~30 MiB to a process
 * that loads it (measured: RSS of `sluice serve` idle, 118 MiB with it, 89 without), which
 * every gateway that fronts no MCP server would otherwise pay (docs/benchmarks/memory.md).
 */
export class McpOnDemand {
  private loaded: Promise<McpGateway> | undefined;
  private gateway: McpGateway | undefined;

  private readonly config: McpConfig;
  private readonly log: McpLog;
  private readonly deps: Omit<ToolCallDeps, 'hub'>;

  constructor(config: McpConfig, log: McpLog, deps: Omit<ToolCallDeps, 'hub'>) {
    this.config = config;
    this.log = log;
    this.deps = deps;
  }

  /** Starts the upstream servers, if any are configured. */
  async start(): Promise<void> {
    if (Object.keys(this.config.servers).length === 0) return;
    (await this.load()).start();
  }

  /** Each upstream server's state, for /readyz and /metrics; none until the gateway is loaded. */
  status(): ServerStatus {
    return this.gateway?.hub.status() ?? {};
  }

  /**
   * The tool-call path of model requests' MCP tools; undefined until the gateway is loaded, which
   * is at start whenever mcp.servers names a server (the only config a request may name one of).
   */
  toolCalls(): ToolCallDeps | undefined {
    return this.gateway?.deps;
  }

  async handle(call: McpRequest): Promise<void> {
    await (await this.load()).handle(call);
  }

  async close(): Promise<void> {
    if (this.loaded) await (await this.loaded).close();
  }

  private load(): Promise<McpGateway> {
    this.loaded ??= import('./mcp-gateway.ts').then(({ McpGateway }) => {
      this.gateway = new McpGateway(this.config, this.log, this.deps);
      return this.gateway;
    });
    return this.loaded;
  }
}

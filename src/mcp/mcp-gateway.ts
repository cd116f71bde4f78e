import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../admission/admission.ts';
import type { McpConfig } from '../config/mcp-schema.ts';
import { toGatewayError } from '../errors/gateway-error.ts';
import { readJsonBody } from '../protocol/http/read-json-body.ts';
import { sendJson } from '../protocol/http/send-json.ts';
import { accessOf, type McpPlace } from './grants.ts';
import { McpHub } from './hub.ts';
import { createSessionServer } from './session-server.ts';
import type { ToolCallDeps, ToolCallScope } from './tool-call.ts';
import type { McpLog } from './upstream-server.ts';

/** One HTTP request to /mcp, as the route hands it over (the caller already authenticated). */
export interface McpRequest {
  req: IncomingMessage;
  res: ServerResponse;
  caller: Caller;
  place: McpPlace;
  /** The config of this HTTP request (a reload's grants and timeouts apply from the next one). */
  config: McpConfig;
  bodyLimit: number;
  storeContentChars: number;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  caller: Caller;
  place: McpPlace;
  /** The scope of the session's latest HTTP request. */
  scope: ToolCallScope;
  lastUsed: number;
  stopWatching: () => void;
}

/**
 * The MCP gateway: MCP's Streamable HTTP transport (the SDK's, on node:http) for each client
 * session, in front of the hub of upstream servers. A session belongs to the key that opened it
 * and the place it was opened at: another key (or the same session id at another endpoint) gets
 * the 404 of an unknown session, and a session unused for mcp.session_idle_s is closed.
 */
export class McpGateway {
  readonly hub: McpHub;
  private readonly sessions = new Map<string, Session>();
  /** What a tool call reaches: the sessions of /mcp use it, and the MCP tool loop of model requests (run-tool-loop.ts). */
  readonly deps: ToolCallDeps;

  constructor(config: McpConfig, log: McpLog, deps: Omit<ToolCallDeps, 'hub'>) {
    this.hub = new McpHub(config, log);
    this.deps = { ...deps, hub: this.hub };
  }

  start(): void {
    this.hub.start();
  }

  async close(): Promise<void> {
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(sessions.map((s) => s.transport.close().catch(() => {})));
    await this.hub.close();
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  /** POST (JSON-RPC in), GET (the server's stream to the client) or DELETE (end the session). */
  async handle(call: McpRequest): Promise<void> {
    try {
      await this.serve(call);
    } catch (err) {
      const error = toGatewayError(err);
      if (call.res.headersSent) return void call.res.end();
      const data = { code: error.code, type: error.type, status: error.status };
      sendJson(call.res, error.status, { jsonrpc: '2.0', id: null, error: { code: -32600, message: error.message, data } });
    }
  }

  private async serve(call: McpRequest): Promise<void> {
    const { req, res } = call;
    const body = req.method === 'POST' ? await readJsonBody(req, call.bodyLimit) : undefined;
    const id = req.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const session = this.sessions.get(id);
      if (!session || !sameCaller(session, call)) return rpcError(res, 404, -32001, 'Session not found');
      session.lastUsed = Date.now();
      session.scope = scopeOf(call);
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return rpcError(res, 400, -32000, 'Bad Request: no Mcp-Session-Id header, and the request is not an initialize request');
    }
    this.closeIdle(call.config.session_idle_s * 1000);
    const session = this.open(call);
    await session.server.connect(session.transport);
    await session.transport.handleRequest(req, res, body);
  }

  private open(call: McpRequest): Session {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void this.sessions.set(id, session),
      onsessionclosed: (id) => this.forget(id),
    });
    const server = createSessionServer(() => session.scope, this.deps);
    // Tell the session's GET stream when the tools change (a server went down or came back).
    const changed = () => {
      void server.sendToolListChanged().catch(() => {});
    };
    const session: Session = {
      transport,
      server,
      caller: call.caller,
      place: call.place,
      scope: scopeOf(call),
      lastUsed: Date.now(),
      stopWatching: this.hub.onChange(changed),
    };
    transport.onclose = () => {
      if (transport.sessionId) this.forget(transport.sessionId);
      session.stopWatching();
    };
    return session;
  }

  private forget(id: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    session.stopWatching();
  }

  private closeIdle(idleMs: number): void {
    const before = Date.now() - idleMs;
    for (const [id, session] of this.sessions) {
      if (session.lastUsed >= before) continue;
      this.forget(id);
      void session.transport.close().catch(() => {});
    }
  }
}

function scopeOf(call: McpRequest): ToolCallScope {
  return {
    caller: call.caller,
    access: accessOf(call.config, call.caller, call.place),
    config: call.config,
    storeContentChars: call.storeContentChars,
  };
}

function sameCaller(session: Session, call: McpRequest): boolean {
  const a = session.caller;
  const b = call.caller;
  return a.keyId === b.keyId && a.projectId === b.projectId && session.place.endpoint === call.place.endpoint;
}

function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', id: null, error: { code, message } });
}

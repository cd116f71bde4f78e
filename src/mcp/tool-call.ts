import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolRequest,
  type CallToolResult,
  CallToolResultSchema,
  ErrorCode,
  McpError,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { Admission, Admit, Caller } from '../admission/admission.ts';
import type { McpConfig } from '../config/mcp-schema.ts';
import { errors } from '../errors/catalog.ts';
import { GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import type { Access } from './grants.ts';
import type { McpHub } from './hub.ts';
import { toMcpError } from './json-rpc-error.ts';
import { toolCallRecord } from './tool-record.ts';
import type { UpstreamServer } from './upstream-server.ts';

/** What a tool call reaches besides its session: built once per gateway. */
export interface ToolCallDeps {
  hub: McpHub;
  /** The limits' admit step (tiers: requests per minute, concurrency): a tool call is charged as a request. */
  admit: Admit;
  /** Writes the call's ledger row and tells metrics and the log. */
  record: (record: LedgerRecord) => void;
  newId: () => string;
}

/** Who calls, what it may call, and the settings in force (the config of the call's HTTP request). */
export interface ToolCallScope {
  caller: Caller;
  access: Access;
  config: McpConfig;
  storeContentChars: number;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * One `tools/call`: found, allowed, admitted by the caller's limits, forwarded with a timeout
 * (progress notifications passed back to the client as they come), its result measured against
 * the cap, and recorded, whatever happened, as one ledger row. A refusal is a JSON-RPC error and
 * is never forwarded.
 */
export function callTool(
  request: CallToolRequest,
  extra: Extra,
  scope: ToolCallScope,
  deps: ToolCallDeps,
): Promise<CallToolResult> {
  const progressToken = request.params._meta?.progressToken;
  return runToolCall(
    {
      prefixed: request.params.name,
      arguments: request.params.arguments,
      signal: extra.signal,
      onprogress:
        progressToken === undefined
          ? undefined
          : (progress) =>
              void extra
                .sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } })
                .catch(() => {}),
    },
    scope,
    deps,
  );
}

/** One tool call as the gateway runs it, from a client session (callTool) or a model's tool loop (tool-loop.ts). */
export interface ToolCallInput {
  prefixed: string;
  arguments: Record<string, unknown> | undefined;
  /** Aborts the call upstream (the client cancelled it, or left). */
  signal: AbortSignal;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** The call's ledger row id; a new one when absent. */
  requestId?: string;
}

/** callTool's work, whoever asks: throws the JSON-RPC error the client of /mcp is answered. */
export async function runToolCall(call: ToolCallInput, scope: ToolCallScope, deps: ToolCallDeps): Promise<CallToolResult> {
  const startedAt = Date.now();
  const prefixed = call.prefixed;
  const args = JSON.stringify(call.arguments ?? {});
  const found = deps.hub.tool(prefixed);
  const facts = { requestId: call.requestId ?? deps.newId(), caller: scope.caller, startedAt, prefixed, arguments: args };
  let result: string | undefined;
  let answer: CallToolResult | undefined;
  let error: GatewayError | undefined;
  let admission: Admission | undefined;
  let upstreamError: McpError | undefined;
  try {
    if (!found) throw errors.mcpToolNotFound(prefixed);
    if (!scope.access.tool(found.server.name, prefixed)) throw errors.mcpToolNotAllowed(prefixed);
    admission = await deps.admit({
      requestId: facts.requestId,
      caller: scope.caller,
      surface: 'mcp',
      target: { provider: found.server.name, model: found.name, requested: prefixed },
      request: { model: prefixed, messages: [] },
      inputTokens: 0,
      streamed: false,
    });
    answer = await forward(found.server, found.name, call, scope);
    result = JSON.stringify(answer);
    const cap = scope.config.max_result_bytes;
    if (Buffer.byteLength(result) > cap) throw errors.mcpResultTooLarge(prefixed, cap);
  } catch (err) {
    upstreamError = err instanceof McpError ? err : undefined;
    error = upstreamError ? fromUpstream(upstreamError, found?.server.name) : toGatewayError(err);
  }
  let record = toolCallRecord({
    ...facts,
    endedAt: Date.now(),
    server: found?.server.name ?? '',
    tool: found?.name ?? prefixed,
    result,
    toolError: answer?.isError === true,
    error,
    storeContentChars: scope.storeContentChars,
  });
  record = admission?.settle(record) ?? record;
  deps.record(record);
  if (upstreamError) throw upstreamError;
  if (error) throw toMcpError(error);
  return answer as CallToolResult;
}

/** The call upstream, with the timeout and the caller's cancellation, progress relayed. */
async function forward(server: UpstreamServer, name: string, call: ToolCallInput, scope: ToolCallScope): Promise<CallToolResult> {
  const client = server.connected;
  if (!client) throw errors.mcpServerUnavailable(server.name);
  const seconds = scope.config.servers[server.name]?.call_timeout_s ?? scope.config.call_timeout_s;
  try {
    return (await client.request({ method: 'tools/call', params: { name, arguments: call.arguments } }, CallToolResultSchema, {
      signal: call.signal,
      timeout: seconds * 1000,
      maxTotalTimeout: seconds * 1000,
      onprogress: call.onprogress,
    })) as CallToolResult;
  } catch (err) {
    throw upstreamFailure(err, server, call.prefixed, seconds, call.signal);
  }
}

/** What a failed upstream call means: a timeout, the client leaving, the server gone, or the server's own JSON-RPC error. */
function upstreamFailure(err: unknown, server: UpstreamServer, prefixed: string, seconds: number, signal: AbortSignal): unknown {
  if (signal.aborted) return errors.cancelled('The client cancelled the tool call.');
  const code = err instanceof McpError ? err.code : undefined;
  if (code === (ErrorCode.RequestTimeout as number)) return errors.mcpToolTimeout(prefixed, seconds);
  if (code !== undefined && code !== (ErrorCode.ConnectionClosed as number)) return err;
  server.failed((err as Error).message);
  return errors.mcpServerUnavailable(server.name);
}

/** The server's own JSON-RPC error, passed to the client as it is; its row says upstream_error with the server's code. */
function fromUpstream(err: McpError, server: string | undefined): GatewayError {
  return new GatewayError({
    code: 'upstream_error',
    status: 502,
    type: 'upstream_error',
    message: err.message,
    upstreamCode: String(err.code),
    provider: server,
  });
}

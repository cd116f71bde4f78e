import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { GatewayError } from '../errors/gateway-error.ts';

/** The JSON-RPC code of each of sluice's refusals: MCP's own where one fits (an unknown or refused tool is -32602). */
function rpcCode(error: GatewayError): number {
  switch (error.code) {
    case 'mcp_tool_not_found':
    case 'mcp_tool_not_allowed':
      return ErrorCode.InvalidParams;
    case 'mcp_tool_timeout':
      return ErrorCode.RequestTimeout;
    case 'rate_limit_exceeded':
    case 'insufficient_quota':
    case 'limits_unavailable':
      return -32029;
    default:
      return ErrorCode.InternalError;
  }
}

/**
 * A refusal or failure of sluice's as the JSON-RPC error an MCP client reads: the code by kind,
 * and sluice's catalog code, type and HTTP status in `data` (what the ledger row records too).
 */
export function toMcpError(error: GatewayError): McpError {
  const data: Record<string, unknown> = { code: error.code, type: error.type, status: error.status };
  const retryAfter = error.headers['Retry-After'] ?? error.headers['retry-after'];
  if (retryAfter !== undefined) data.retry_after_s = Number(retryAfter);
  return new McpError(rpcCode(error), error.message, data);
}

import { type LedgerRecord, NO_USAGE } from '../accounting/ledger-record.ts';
import type { Caller } from '../admission/admission.ts';
import type { GatewayError } from '../errors/gateway-error.ts';

/** What one MCP tool call did, as the ledger needs it. */
export interface ToolCallFacts {
  requestId: string;
  caller: Caller;
  startedAt: number;
  endedAt: number;
  /** The server's name, its own name of the tool, and the name the client called. */
  server: string;
  tool: string;
  prefixed: string;
  arguments: string;
  /** The result's JSON; undefined when the call failed before one arrived. */
  result: string | undefined;
  /** True when the tool answered `isError: true` (a tool's own failure, answered as a result). */
  toolError: boolean;
  error: GatewayError | undefined;
  /** ledger.store_content's characters (0: nothing of the arguments nor the result is kept). */
  storeContentChars: number;
}

/**
 * The ledger row of an MCP tool call: surface `mcp`, the server as the provider and the tool as
 * the model (`requested_model` is the prefixed name the client called), no tokens and no cost,
 * the sizes of the arguments and the result in bytes, and these themselves only when
 * ledger.store_content is on. A refused call (not allowed, over a limit) is a row too.
 */
export function toolCallRecord(facts: ToolCallFacts): LedgerRecord {
  const { error, storeContentChars: keep } = facts;
  return {
    requestId: facts.requestId,
    createdAt: facts.startedAt,
    keyId: facts.caller.keyId,
    projectId: facts.caller.projectId,
    provider: facts.server,
    model: facts.tool,
    requestedModel: facts.prefixed,
    surface: 'mcp',
    streamed: false,
    ...NO_USAGE,
    ttftMs: null,
    latencyMs: facts.endedAt - facts.startedAt,
    upstreamStatus: null,
    outcome: error ? (error.code === 'cancelled' ? 'cancelled' : 'error') : 'ok',
    errorType: error?.type ?? null,
    errorCode: error?.code ?? null,
    errorMessage: error?.message ?? null,
    upstreamErrorCode: error?.upstreamCode ?? null,
    finishReason: error ? null : facts.toolError ? 'tool_error' : 'stop',
    prompt: keep > 0 ? facts.arguments.slice(0, keep) : null,
    completion: keep > 0 && facts.result !== undefined ? facts.result.slice(0, keep) : null,
    bytesIn: Buffer.byteLength(facts.arguments),
    bytesOut: facts.result === undefined ? 0 : Buffer.byteLength(facts.result),
  };
}

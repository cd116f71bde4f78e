import type { LedgerRecord } from '../../accounting/ledger-record.ts';
import type { Caller } from '../../admission/admission.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import type { SessionUsage } from './session-usage.ts';

/** Who ended a session: the client, the upstream, or sluice's shutdown. */
export type ClosedBy = 'client' | 'upstream' | 'shutdown';

/** What one Realtime session did, as its ledger row needs it. */
export interface SessionFacts {
  requestId: string;
  caller: Caller;
  provider: string;
  model: string;
  requestedModel: string;
  startedAt: number;
  endedAt: number;
  usage: SessionUsage;
  /** The responses' costs summed, and whether every one had a price. */
  costUsd: number;
  priceKnown: boolean;
  /** The upstream's handshake status (101 once it opened). */
  upstreamStatus: number | null;
  closedBy: ClosedBy;
  /** Why the session failed: an upstream that closed abnormally, a socket error, the shutdown. */
  error: GatewayError | undefined;
}

/**
 * The one ledger row of a Realtime session: surface `realtime`, streamed, its responses' usage
 * summed and priced, its duration as the latency. `finish_reason` says who closed it
 * (`client_closed`, `upstream_closed`, `shutdown`); the outcome is `ok` for a close either side
 * asked for, `cancelled` at sluice's shutdown, `error` when a socket failed or the upstream
 * closed with an error code.
 */
export function sessionRecord(facts: SessionFacts): LedgerRecord {
  const { usage, error } = facts;
  return {
    requestId: facts.requestId,
    createdAt: facts.startedAt,
    keyId: facts.caller.keyId,
    projectId: facts.caller.projectId,
    provider: facts.provider,
    model: facts.model,
    requestedModel: facts.requestedModel,
    surface: 'realtime',
    streamed: true,
    inputTokens: usage.inputTokens,
    cachedInputTokens: usage.cachedInputTokens,
    cacheWriteTokens: 0,
    outputTokens: usage.outputTokens,
    reasoningTokens: 0,
    audioInputTokens: usage.audioInputTokens,
    audioOutputTokens: usage.audioOutputTokens,
    usageSource: 'provider',
    costUsd: facts.costUsd,
    priceKnown: facts.priceKnown,
    ttftMs: null,
    latencyMs: facts.endedAt - facts.startedAt,
    upstreamStatus: facts.upstreamStatus,
    outcome: facts.closedBy === 'shutdown' ? 'cancelled' : error ? 'error' : 'ok',
    errorType: error?.type ?? null,
    errorCode: error?.code ?? null,
    errorMessage: error?.message ?? null,
    finishReason: facts.closedBy === 'shutdown' ? 'shutdown' : `${facts.closedBy}_closed`,
    prompt: null,
    completion: null,
  };
}

/** A close code that ends a session normally: 1000, 1001 (going away), 1005 (no code sent). */
export function isNormalClose(code: number): boolean {
  return code === 1000 || code === 1001 || code === 1005;
}

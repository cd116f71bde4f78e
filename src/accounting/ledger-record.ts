import type { Attempt } from './attempt.ts';

/** One row per request, whatever way it ended. Times are epoch milliseconds. */
export interface LedgerRecord {
  requestId: string;
  createdAt: number;
  /** Gateway-issued key id; null until keys exist (or with the master key). */
  keyId: string | null;
  /** The key's project; null for the master key (or a gateway without keys). */
  projectId: string | null;
  provider: string;
  /** The provider-side model id. */
  model: string;
  /** What the client named (alias or provider/model). */
  requestedModel: string;
  /**
   * `files` and `batches`: the Files and Batch APIs relayed (src/surfaces/files, src/surfaces/batches);
   * `realtime`: one row per Realtime WebSocket session, its responses' usage summed (src/surfaces/realtime).
   */
  surface:
    | 'chat'
    | 'responses'
    | 'messages'
    | 'embeddings'
    | 'images'
    | 'audio.transcriptions'
    | 'audio.translations'
    | 'audio.speech'
    | 'mcp'
    | 'files'
    | 'batches'
    | 'realtime';
  streamed: boolean;
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  /** Usage details some upstreams report (Usage in protocol/canonical/usage.ts); null when not reported. */
  audioInputTokens?: number | null;
  audioOutputTokens?: number | null;
  acceptedPredictionTokens?: number | null;
  rejectedPredictionTokens?: number | null;
  /** `provider` or `estimated` (counted locally with a BPE tokenizer). */
  usageSource: 'provider' | 'estimated';
  costUsd: number;
  /** False when the pricing registry has no price for the model: cost is 0.0, flagged. */
  priceKnown: boolean;
  ttftMs: number | null;
  latencyMs: number;
  upstreamStatus: number | null;
  /**
   * `interrupted`: sluice stopped (a crash, a kill) while the request ran; recorded at the next
   * start from the durable journal, with the usage it had reached (interrupted-record.ts).
   */
  outcome: 'ok' | 'error' | 'cancelled' | 'interrupted';
  errorType: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  finishReason: string | null;
  /** Only with `ledger.store_content: true`, capped. */
  prompt: string | null;
  completion: string | null;
  /** The upstream's own error type and code when it failed the request (errorType/errorCode are sluice's). */
  upstreamErrorType?: string | null;
  upstreamErrorCode?: string | null;
  /** The upstream's own request id (x-request-id, request-id, x-amzn-requestid), for support tickets. */
  upstreamRequestId?: string | null;
  /** `void`: the caller's tier does not bill abandoned streams, so cost_usd is 0 whatever was generated. */
  billing?: 'void' | null;
  /** Every target tried, in order, when routing chose one (attempt.ts; routing fills them); null before routing ran. */
  attempts?: Attempt[] | null;
  /**
   * The request's cost added to each budget window it falls under: written in the same
   * transaction as the row (budget_spend), so a row and its spend are stored together or not at
   * all. Not a column of the ledger.
   */
  budgetSpend?: BudgetSpend[] | null;
  /** sluice's own time on the request in ms (pipeline/overhead-clock.ts); null when it never got that far. */
  overheadMs?: number | null;
  /** The client's tags (`metadata.tags`, `x-sluice-tags`: pipeline/request-tags.ts), each once; null: none. */
  tags?: string[] | null;
  /** An MCP tool call's arguments and result, as JSON bytes (surface `mcp`); null on model requests. */
  bytesIn?: number | null;
  bytesOut?: number | null;
  /**
   * The exact response cache (src/cache): `hit` (the answer was replayed from it), `miss` (asked
   * upstream, kept if whole), `bypass` (not served by it); null: not a model request of a surface it
   * serves, or an older row. Not `cachedInputTokens`, the provider's own prompt-cache prefix.
   */
  responseCache?: 'hit' | 'miss' | 'bypass' | null;
  /** A response-cache hit: what the answer would have cost upstream (costUsd is 0); null otherwise. */
  cacheSavedUsd?: number | null;
  /** The label of the provider key the answer came with (providers.<name>.api_keys); null without a key pool. Never the key. */
  providerKey?: string | null;
  /** A dry run (`x-sluice-dry-run: 1`): admitted, not sent, nothing spent. */
  dryRun?: boolean | null;
}

/** One budget window's share of a request's cost (governance/budgets/budget-windows.ts names the window). */
export interface BudgetSpend {
  /** `key:k1:day:2026-11-24`. */
  windowId: string;
  subject: string;
  period: string;
  /** Epoch ms of the period's start. */
  start: number;
  usd: number;
}

/**
 * The usage of a record that used none: a request refused before any provider, an MCP tool call
 * (tools are not billed in tokens). Exact, not estimated, so its price is known: zero.
 */
export const NO_USAGE = {
  inputTokens: 0,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
  usageSource: 'provider',
  costUsd: 0,
  priceKnown: true,
} as const satisfies Partial<LedgerRecord>;

import type { LedgerRecord } from '../../src/accounting/ledger-record.ts';

/** A complete ledger record with plausible values; tests override what they look at. */
export function ledgerRecord(overrides: Partial<LedgerRecord> = {}): LedgerRecord {
  return {
    requestId: 'req_0001',
    createdAt: 1_760_000_000_000,
    keyId: null,
    projectId: null,
    provider: 'openai',
    model: 'gpt-4o-mini',
    requestedModel: 'openai/gpt-4o-mini',
    surface: 'chat',
    streamed: true,
    inputTokens: 12,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 7,
    reasoningTokens: 0,
    usageSource: 'provider',
    costUsd: 0.000006,
    priceKnown: true,
    ttftMs: 120,
    latencyMs: 480,
    upstreamStatus: 200,
    outcome: 'ok',
    errorType: null,
    errorCode: null,
    errorMessage: null,
    finishReason: 'stop',
    prompt: null,
    completion: null,
    upstreamRequestId: null,
    billing: null,
    upstreamErrorType: null,
    upstreamErrorCode: null,
    ...overrides,
  };
}

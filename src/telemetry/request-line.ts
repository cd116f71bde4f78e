import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { Logger } from './logger.ts';

/**
 * The one log line of a finished request, from its ledger record: what an operator greps for
 * (ids, model, status, tokens, cost, times). Never the prompt, the completion or the key (only
 * the key's id, which the request log shows anyway).
 */
export function logRequest(logger: Logger, record: LedgerRecord): void {
  if (!logger.isLevelEnabled('info')) return;
  const line = {
    request_id: record.requestId,
    surface: record.surface,
    requested_model: record.requestedModel,
    provider: record.provider,
    model: record.model,
    streamed: record.streamed,
    upstream_status: record.upstreamStatus,
    outcome: record.outcome,
    error_code: record.errorCode,
    key_id: record.keyId,
    project_id: record.projectId,
    input_tokens: record.inputTokens,
    output_tokens: record.outputTokens,
    cached_input_tokens: record.cachedInputTokens,
    reasoning_tokens: record.reasoningTokens,
    cost_usd: record.costUsd,
    ttft_ms: record.ttftMs,
    latency_ms: record.latencyMs,
    overhead_ms: record.overheadMs ?? null,
    // Only on requests under the exact response cache (docs/operations/response-cache.md).
    ...(record.responseCache && { response_cache: record.responseCache }),
  };
  if (record.outcome === 'ok') logger.info(line, 'request');
  else logger.warn(line, 'request');
}

import type { LedgerRecord } from './ledger-record.ts';

/** The request log, as JSON with snake_case fields (the style of the rest of the API). */
export function recordJson(r: LedgerRecord): Record<string, unknown> {
  return {
    object: 'sluice.request',
    request_id: r.requestId,
    created_at: new Date(r.createdAt).toISOString(),
    key_id: r.keyId,
    project_id: r.projectId,
    provider: r.provider,
    model: r.model,
    requested_model: r.requestedModel,
    surface: r.surface,
    streamed: r.streamed,
    usage: {
      input_tokens: r.inputTokens,
      cached_input_tokens: r.cachedInputTokens,
      cache_write_tokens: r.cacheWriteTokens,
      output_tokens: r.outputTokens,
      reasoning_tokens: r.reasoningTokens,
      // Usage details the upstream reported (audio, Predicted Outputs); left out when it did not.
      ...reported({
        audio_input_tokens: r.audioInputTokens,
        audio_output_tokens: r.audioOutputTokens,
        accepted_prediction_tokens: r.acceptedPredictionTokens,
        rejected_prediction_tokens: r.rejectedPredictionTokens,
      }),
      estimated: r.usageSource === 'estimated',
    },
    cost_usd: r.costUsd,
    price_known: r.priceKnown,
    ttft_ms: r.ttftMs,
    latency_ms: r.latencyMs,
    overhead_ms: r.overheadMs ?? null,
    upstream_status: r.upstreamStatus,
    outcome: r.outcome,
    error: r.errorCode
      ? {
          type: r.errorType,
          code: r.errorCode,
          message: r.errorMessage,
          ...(r.upstreamErrorType || r.upstreamErrorCode
            ? { upstream: { type: r.upstreamErrorType ?? null, code: r.upstreamErrorCode ?? null } }
            : {}),
        }
      : null,
    finish_reason: r.finishReason,
    upstream_request_id: r.upstreamRequestId ?? null,
    billing: r.billing ?? null,
    tags: r.tags ?? [],
    // Only when routing had a choice (a route, or the request's own models).
    ...(r.attempts && {
      attempts: r.attempts.map((a) => ({
        provider: a.provider,
        model: a.model,
        status: a.status,
        error_code: a.errorCode,
        fallback_reason: a.fallbackReason,
        latency_ms: a.latencyMs,
      })),
    }),
    provider_key: r.providerKey ?? null,
    ...(r.dryRun && { dry_run: true }),
    // An MCP tool call's sizes (surface `mcp`).
    ...((r.surface === 'mcp' || r.surface === 'files' || r.surface === 'batches') && {
      bytes_in: r.bytesIn ?? null,
      bytes_out: r.bytesOut ?? null,
    }),
    // Under the exact response cache (src/cache); not `cached_tokens`, the provider's prompt cache.
    ...(r.responseCache && { response_cache: r.responseCache, cache_saved_usd: r.cacheSavedUsd ?? null }),
    prompt: r.prompt,
    completion: r.completion,
  };
}

function reported(fields: Record<string, number | null | undefined>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(fields)) if (typeof value === 'number') out[key] = value;
  return out;
}

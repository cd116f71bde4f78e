import type { FallbackEvent } from '../../protocol/canonical/events.ts';
import type { Usage } from '../../protocol/canonical/usage.ts';
import { dataFrame, namedFrame } from '../../protocol/sse/frames.ts';

/** The named frames of the `accounting` stream profile (reference/accounting-events.txt). */
export interface AccountingIdentity {
  requestId: string;
  provider: string;
  /** The provider-side model id. */
  model: string;
}

/** `estimated`: the input is sluice's own count (the provider has not reported it yet); said only then. */
export function usageStartFrame(id: AccountingIdentity, inputTokens: number, estimated = false): string {
  return namedFrame(
    'usage_start',
    JSON.stringify({
      type: 'usage_start',
      request_id: id.requestId,
      provider: id.provider,
      model: id.model,
      input_tokens: inputTokens,
      ...(estimated && { estimated: true }),
    }),
  );
}

/** The caller is within 10% of a per-minute limit of its tier (README: rate_limit_warning). */
export interface LimitWarning {
  scope: 'key' | 'project';
  limitType: 'requests' | 'tokens';
  limit: number;
  remaining: number;
  resetMs: number;
}

/** Sent once, right after usage_start, when the request left its caller near a per-minute limit. */
export function rateLimitWarningFrame(id: AccountingIdentity, w: LimitWarning): string {
  return namedFrame(
    'rate_limit_warning',
    JSON.stringify({
      type: 'rate_limit_warning',
      request_id: id.requestId,
      provider: id.provider,
      model: id.model,
      scope: w.scope,
      limit_type: w.limitType,
      limit: w.limit,
      remaining: w.remaining,
      reset_ms: w.resetMs,
    }),
  );
}

/**
 * Sent when routing retried on another target before the first token (reference/accounting-events.txt:
 * "the gateway transparently retried on a different provider"), before the first content frame.
 */
export function providerFallbackFrame(requestId: string, e: FallbackEvent): string {
  return namedFrame(
    'provider_fallback',
    JSON.stringify({
      type: 'provider_fallback',
      request_id: requestId,
      from_provider: e.from.provider,
      from_model: e.from.model,
      provider: e.to.provider,
      model: e.to.model,
      reason: e.reason,
    }),
  );
}

/** Sent when the upstream reports cached input tokens: the first token came from a cached prefix. */
export function cacheHitFrame(id: AccountingIdentity, cachedTokens: number): string {
  return namedFrame(
    'cache_hit',
    JSON.stringify({
      type: 'cache_hit',
      request_id: id.requestId,
      provider: id.provider,
      model: id.model,
      cached_tokens: cachedTokens,
    }),
  );
}

export function usageFinalFrame(id: AccountingIdentity, usage: Usage, costUsd: number, latencyMs: number): string {
  return namedFrame(
    'usage_final',
    JSON.stringify({
      type: 'usage_final',
      request_id: id.requestId,
      provider: id.provider,
      model: id.model,
      input_tokens: usage.inputTokens,
      output_tokens: usage.outputTokens,
      cost_usd: costUsd,
      latency_ms: latencyMs,
      estimated: usage.source === 'estimated',
    }),
  );
}

/** The Responses-style envelope the profile ends with, carrying the same totals. */
export function responseDoneFrame(id: AccountingIdentity, usage: Usage): string {
  return dataFrame(
    JSON.stringify({
      type: 'response.done',
      response: {
        id: id.requestId,
        object: 'response',
        status: 'completed',
        usage: {
          prompt_tokens: usage.inputTokens,
          completion_tokens: usage.outputTokens,
          total_tokens: usage.inputTokens + usage.outputTokens,
        },
      },
    }),
  );
}

/** Everything between the finish frame and `[DONE]` on success. */
export function accountingTail(id: AccountingIdentity, usage: Usage, costUsd: number, latencyMs: number): string {
  const cached = usage.cachedInputTokens ?? 0;
  return (
    (cached > 0 ? cacheHitFrame(id, cached) : '') + usageFinalFrame(id, usage, costUsd, latencyMs) + responseDoneFrame(id, usage)
  );
}

import type { IncomingMessage } from 'node:http';
import type { AdmissionPreview } from '../admission/admission.ts';
import type { Candidate } from '../routing/plan.ts';

/** `x-sluice-dry-run: 1` (or `true`): the request is admitted as usual, answered with what would happen, and not sent. */
export function isDryRun(req: IncomingMessage): boolean {
  const value = req.headers['x-sluice-dry-run'];
  return value === '1' || value === 'true';
}

/** Whether the response cache would answer the request (cache-lookup.ts cacheVerdict). */
export type CacheVerdict = 'off' | 'bypass' | 'hit' | 'miss';

/**
 * A dry run's answer (docs/api/dry-run.md): the target and the fallbacks that would be tried in
 * that order, whether the cache would answer, the estimate and reservation, and every limit and
 * budget of the caller with what the request would leave of it.
 */
export function dryRunAnswer(
  requestId: string,
  candidates: readonly Candidate[],
  cache: CacheVerdict,
  preview: AdmissionPreview | undefined,
): Record<string, unknown> {
  const [target, ...fallbacks] = candidates.map((c) => c.key);
  return {
    object: 'sluice.dry_run',
    id: requestId,
    model: candidates[0].target.requested,
    target,
    fallbacks,
    cache,
    estimate: {
      input_tokens: preview?.estimatedInputTokens ?? null,
      reservation_usd: preview?.reservationUsd ?? null,
    },
    tier: preview?.tier ?? null,
    limits: (preview?.limits ?? []).map((l) => ({
      scope: l.scope,
      kind: l.kind,
      limit: l.limit,
      remaining: l.remaining,
      remaining_after: l.remainingAfter,
      reset_ms: l.resetMs,
    })),
    budgets: (preview?.budgets ?? []).map((b) => ({
      scope: b.scope,
      period: b.period,
      limit_usd: b.limitUsd,
      spent_usd: b.spentUsd,
      reservation_usd: b.reservationUsd,
      remaining_after_usd: b.remainingAfterUsd,
      resets_at: new Date(b.resetsAt).toISOString(),
    })),
  };
}

import { errors } from '../errors/catalog.ts';
import { normalizeTokenCount, type Usage } from '../protocol/canonical/usage.ts';
import type { UnfinishedRequest } from './journal-entries.ts';
import type { LedgerRecord } from './ledger-record.ts';
import type { PricingRegistry } from './pricing.ts';

/**
 * The row of a request that was running when sluice stopped without a drain (a crash, a kill),
 * made at the next start from what the durable journal last knew of it: outcome `interrupted`,
 * usage estimated, priced like any other row.
 * - Input: the upstream's own count if it reported one (Anthropic does at the start), else the
 *   prompt's estimate. It is charged even when the journal never saw the upstream answer: an
 *   admitted request was sent or about to be, and a budget must be overstated, never understated.
 * - Output: what the journal's last progress line counted (at most journal_progress_ms old), or
 *   the upstream's report if larger.
 * Values come from a file a crash may have cut, so every count is checked again here (and the
 * ledger writer sanitizes the record as it does every other).
 */
export function interruptedRecord(unfinished: UnfinishedRequest, pricing: PricingRegistry): LedgerRecord {
  const { admitted, progress } = unfinished;
  const usage = interruptedUsage(unfinished);
  const provider = progress?.provider ?? admitted.provider;
  const model = progress?.model ?? admitted.model;
  const { costUsd, priceKnown } = pricing.cost(provider, model, usage, new Date(admitted.createdAt));
  const error = errors.gatewayStopped();
  const lastSeen = progress?.at ?? admitted.createdAt;
  return {
    requestId: admitted.requestId,
    createdAt: admitted.createdAt,
    keyId: admitted.keyId ?? null,
    projectId: admitted.projectId ?? null,
    provider,
    model,
    requestedModel: admitted.requestedModel,
    surface: admitted.surface,
    streamed: admitted.streamed,
    inputTokens: usage.inputTokens,
    cachedInputTokens: usage.cachedInputTokens ?? 0,
    cacheWriteTokens: usage.cacheWriteTokens ?? 0,
    outputTokens: usage.outputTokens,
    reasoningTokens: usage.reasoningTokens ?? 0,
    audioInputTokens: null,
    audioOutputTokens: null,
    acceptedPredictionTokens: null,
    rejectedPredictionTokens: null,
    usageSource: 'estimated',
    costUsd,
    priceKnown,
    ttftMs: typeof progress?.firstOutputAt === 'number' ? Math.max(0, progress.firstOutputAt - admitted.createdAt) : null,
    latencyMs: Math.max(0, lastSeen - admitted.createdAt),
    upstreamStatus: progress?.acknowledged === true ? 200 : null,
    outcome: 'interrupted',
    errorType: error.type,
    errorCode: error.code,
    errorMessage: error.message,
    finishReason: null,
    prompt: null,
    completion: null,
    // From a file: the ledger writer keeps them only if they are still a valid tag list.
    tags: admitted.tags ?? null,
  };
}

function interruptedUsage({ admitted, progress }: UnfinishedRequest): Usage {
  const reported = progress?.reported ?? null;
  const reportedInput = count(reported?.inputTokens);
  const usage: Usage = {
    inputTokens: reportedInput > 0 ? reportedInput : count(admitted.promptTokens),
    outputTokens: Math.max(count(reported?.outputTokens), count(progress?.outputTokens)),
    source: 'estimated',
  };
  if (reportedInput > 0) {
    const cached = count(reported?.cachedInputTokens);
    const cacheWrite = count(reported?.cacheWriteTokens);
    if (cached > 0) usage.cachedInputTokens = cached;
    if (cacheWrite > 0) usage.cacheWriteTokens = cacheWrite;
  }
  const reasoning = count(reported?.reasoningTokens);
  if (reasoning > 0) usage.reasoningTokens = Math.min(reasoning, usage.outputTokens);
  return usage;
}

const count = (value: unknown): number => normalizeTokenCount(value) ?? 0;

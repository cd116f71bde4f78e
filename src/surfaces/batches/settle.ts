import { batchCost } from '../../accounting/batch-cost.ts';
import type { BudgetSpend, LedgerRecord } from '../../accounting/ledger-record.ts';
import type { Config } from '../../config/schema.ts';
import type { Caller } from '../../admission/admission.ts';
import { budgetWindows, NANOS_PER_USD, toNanos } from '../../governance/budgets/budget-windows.ts';
import type { BudgetRule } from '../../governance/limits/tier-policy.ts';
import type { PipelineContext } from '../../pipeline/context.ts';
import type { BatchApi } from '../../providers/batch-api.ts';
import type { BatchObject, BatchObjectsStore } from '../../store/batch-objects-store.ts';
import { anthropicBatchUsage, type ModelUsage, openAIBatchUsage } from './batch-usage.ts';

/** What a settlement reaches: the store, the ledger, the prices, and how request ids are made. */
export interface SettleDeps {
  ctx: PipelineContext;
  store: BatchObjectsStore;
  newId: () => string;
}

/** OpenAI's batch states after which nothing more is processed (cancelled and expired batches keep what they finished). */
const OPENAI_ENDED = new Set(['completed', 'failed', 'expired', 'cancelled']);

/** Whether an upstream batch object has ended: its usage is final. */
export function batchEnded(kind: BatchApi['kind'], batch: Record<string, unknown>): boolean {
  return kind === 'openai' ? OPENAI_ENDED.has(batch.status as string) : batch.processing_status === 'ended';
}

/**
 * Records an ended batch's usage and cost, once across every instance: the usage is read first
 * (the output file, the results; reading twice is harmless), then the settlement is claimed with
 * a conditional UPDATE, and only the instance that won it writes the rows, one per model, priced
 * at the batch discount. Returns whether this call recorded it. `results`: Anthropic's results
 * as a client just fetched them (not asked again).
 */
export async function settleBatch(
  object: BatchObject,
  api: BatchApi,
  batch: Record<string, unknown>,
  deps: SettleDeps,
  results?: string,
): Promise<boolean> {
  if (object.settledAt !== null || !batchEnded(api.kind, batch)) return false;
  const usage = await usageOf(object, api, batch, deps.ctx.config, results);
  if (!(await deps.store.claimSettlement(object.id))) return false;
  const now = Date.now();
  for (const one of usage) {
    const record = settlementRecord(object, one, now, deps);
    deps.ctx.accounting.ledger?.write(record);
    deps.ctx.observe?.(record);
  }
  return true;
}

/**
 * Settles an ended batch on a client's path (a retrieve, a results read, a delete): a failure is
 * logged, never the client's (the poller, or the next read, tries again).
 */
export async function settleQuietly(
  deps: SettleDeps,
  object: BatchObject,
  provider: { name: string; api: BatchApi },
  batch: Record<string, unknown>,
  results?: string,
): Promise<void> {
  try {
    await settleBatch(object, provider.api, batch, deps, results);
  } catch (err) {
    deps.ctx.accounting.log(`batches: could not settle ${object.id} (${provider.name}): ${(err as Error).message}`);
  }
}

async function usageOf(
  object: BatchObject,
  api: BatchApi,
  batch: Record<string, unknown>,
  config: Config,
  results: string | undefined,
): Promise<ModelUsage[]> {
  const limit = config.batches.max_download_bytes;
  const signal = AbortSignal.timeout(config.upstream.headers_timeout_s * 1000 + 60_000);
  if (api.kind === 'anthropic') {
    const text = results ?? (await fetchText(api, `/messages/batches/${encodeURIComponent(object.id)}/results`, signal, limit));
    return anthropicBatchUsage(text);
  }
  const output = batch.output_file_id;
  if (typeof output !== 'string' || !output) return [];
  return openAIBatchUsage(await fetchText(api, `/files/${encodeURIComponent(output)}/content`, signal, limit));
}

async function fetchText(api: BatchApi, path: string, signal: AbortSignal, limit: number): Promise<string> {
  const answer = await api.send({ method: 'GET', path }, signal, limit);
  const text = answer.body.toString('utf8');
  if (answer.status < 200 || answer.status >= 300) throw api.mapError(answer.status, answer.headers, text);
  return text;
}

/**
 * The settlement's row for one model: the batch's key and project, the usage as the upstream
 * reported it, the cost at the batch discount, the batch id as the upstream request id, and the
 * spend charged to the budget windows in force now (the rules kept from the batch's creation).
 */
function settlementRecord(object: BatchObject, { model, usage }: ModelUsage, now: number, deps: SettleDeps): LedgerRecord {
  const { config, accounting } = deps.ctx;
  const cost = batchCost(accounting.pricing, object.provider, model, usage, config.batches.price_factor, new Date(now));
  const record: LedgerRecord = {
    requestId: deps.newId(),
    createdAt: now,
    keyId: object.keyId,
    projectId: object.projectId,
    provider: object.provider,
    model,
    requestedModel: model,
    surface: 'batches',
    streamed: false,
    inputTokens: usage.inputTokens,
    cachedInputTokens: usage.cachedInputTokens ?? 0,
    cacheWriteTokens: usage.cacheWriteTokens ?? 0,
    outputTokens: usage.outputTokens,
    reasoningTokens: usage.reasoningTokens ?? 0,
    audioInputTokens: usage.audioInputTokens ?? null,
    audioOutputTokens: usage.audioOutputTokens ?? null,
    usageSource: 'provider',
    costUsd: cost.costUsd,
    priceKnown: cost.priceKnown,
    ttftMs: null,
    latencyMs: Math.max(0, now - object.createdAt),
    upstreamStatus: 200,
    outcome: 'ok',
    errorType: null,
    errorCode: null,
    errorMessage: null,
    finishReason: 'batch_settled',
    prompt: null,
    completion: null,
    upstreamRequestId: object.id,
  };
  if (!object.budgets || cost.costUsd <= 0) return record;
  // The windows of the budgets the batch's key was held to at creation, as of now.
  const windows = budgetWindows(JSON.parse(object.budgets) as BudgetRule[], object, now);
  deps.ctx.chargeLate(windows, record.requestId, cost.costUsd);
  const usd = toNanos(cost.costUsd) / NANOS_PER_USD;
  const budgetSpend: BudgetSpend[] = windows.map((w) => ({
    windowId: w.id,
    subject: w.subject,
    period: w.period,
    start: w.start,
    usd,
  }));
  return { ...record, budgetSpend };
}

/** The budget rules a caller's request is held to (its tier's, then its own), kept with a batch for its settlement. */
export function budgetRulesOf(config: Config, caller: Caller): string | null {
  const tierName = caller.tier ?? config.default_tier;
  const tier = tierName === undefined ? undefined : config.tiers[tierName];
  const rules: BudgetRule[] = [
    ...(tier?.budgets ?? []).map((b) => ({ scope: b.scope, period: b.period, limitUsd: b.limit_usd })),
    ...caller.budgets,
  ];
  return rules.length > 0 ? JSON.stringify(rules) : null;
}

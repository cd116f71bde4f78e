import { errors } from '../errors/catalog.ts';
import { seesProject } from '../governance/users/access.ts';
import { sendJson } from '../protocol/http/send-json.ts';
import type { ConsoleCall } from './console-call.ts';
import { openLedgerStore, readStore } from '../store/read-store.ts';

/**
 * GET /console/api/price/{request_id}: the price sluice applies to the request's model (config
 * override, the registry's entry at the request's time, free, or unknown) and the cost it gives
 * for the record's tokens. The ledger stores the cost, not the price: this is the price looked up
 * again now, so a config price changed since shows as a cost that differs from the recorded one.
 */
export async function handlePriceUsed({ res, ctx, param, requestId, caller }: ConsoleCall): Promise<void> {
  const record = await readStore(ctx, openLedgerStore(ctx).get(param));
  // Another project's request is a member's 404, like an unknown one.
  if (!record || (caller && !seesProject(caller, record.projectId))) throw errors.requestNotFound(param);
  const cost = ctx.accounting.pricing.cost(
    record.provider,
    record.model,
    {
      inputTokens: record.inputTokens,
      outputTokens: record.outputTokens,
      cachedInputTokens: record.cachedInputTokens,
      cacheWriteTokens: record.cacheWriteTokens,
      audioInputTokens: record.audioInputTokens ?? undefined,
      audioOutputTokens: record.audioOutputTokens ?? undefined,
      source: record.usageSource,
    },
    new Date(record.createdAt),
  );
  sendJson(
    res,
    200,
    {
      object: 'sluice.price',
      request_id: record.requestId,
      source: cost.source,
      registry_model: cost.registryModel ?? null,
      price: cost.price ?? null,
      cost_usd: cost.costUsd,
      recorded_cost_usd: record.costUsd,
      billing: record.billing ?? null,
    },
    { 'X-Request-ID': requestId },
  );
}

import type { ServerResponse } from 'node:http';
import type { LedgerRecord } from '../../accounting/ledger-record.ts';
import { errors } from '../../errors/catalog.ts';
import type { LedgerQuery } from '../../store/ledger-store.ts';
import type { GatewayContext } from '../gateway-context.ts';
import { sendJson } from '../../protocol/http/send-json.ts';

const OUTCOMES = new Set(['ok', 'error', 'cancelled']);

/** The request log, as JSON with snake_case fields (the style of the rest of the API). */
export function recordJson(r: LedgerRecord): Record<string, unknown> {
  return {
    object: 'sluice.request',
    request_id: r.requestId,
    created_at: new Date(r.createdAt).toISOString(),
    key_id: r.keyId,
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
      estimated: r.usageSource === 'estimated',
    },
    cost_usd: r.costUsd,
    price_known: r.priceKnown,
    ttft_ms: r.ttftMs,
    latency_ms: r.latencyMs,
    upstream_status: r.upstreamStatus,
    outcome: r.outcome,
    error: r.errorCode ? { type: r.errorType, code: r.errorCode, message: r.errorMessage } : null,
    finish_reason: r.finishReason,
    prompt: r.prompt,
    completion: r.completion,
  };
}

function storeOf(ctx: GatewayContext) {
  if (!ctx.ledgerStore) throw errors.invalidRequest('The request log is disabled (ledger.enabled: false).');
  return ctx.ledgerStore;
}

/**
 * GET /v1/requests/{id}: the id from X-Request-ID, or the `chatcmpl-…` / `resp_…` id a client
 * saw in the stream. Records are written in the background, so a lookup right after a stream
 * first flushes what is pending.
 */
export async function handleGetRequest(res: ServerResponse, ctx: GatewayContext, id: string, requestId: string) {
  const store = storeOf(ctx);
  const bare = id.replace(/^(chatcmpl-|resp_)/, '');
  let record = await store.get(bare);
  if (!record && ctx.accounting.ledger && ctx.accounting.ledger.pending > 0) {
    await flushBriefly(ctx);
    record = await store.get(bare);
  }
  if (!record) throw errors.requestNotFound(id);
  sendJson(res, 200, recordJson(record), { 'X-Request-ID': requestId });
}

/** GET /v1/requests?model=&provider=&outcome=&since=&until=&limit=&cursor= */
export async function handleListRequests(res: ServerResponse, ctx: GatewayContext, search: URLSearchParams, requestId: string) {
  const store = storeOf(ctx);
  const query: LedgerQuery = {};
  const str = (k: string) => search.get(k) ?? undefined;
  query.model = str('model');
  query.provider = str('provider');
  const outcome = str('outcome');
  if (outcome !== undefined) {
    if (!OUTCOMES.has(outcome)) throw errors.invalidRequest('outcome must be ok, error or cancelled.', 'outcome');
    query.outcome = outcome as LedgerQuery['outcome'];
  }
  for (const k of ['since', 'until'] as const) {
    const v = str(k);
    if (v === undefined) continue;
    const t = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
    if (!Number.isFinite(t)) throw errors.invalidRequest(`${k} must be an ISO date or epoch milliseconds.`, k);
    query[k] = t;
  }
  const limit = str('limit');
  if (limit !== undefined) {
    const n = Number(limit);
    if (!Number.isInteger(n) || n < 1 || n > 1000) throw errors.invalidRequest('limit must be 1 to 1000.', 'limit');
    query.limit = n;
  }
  query.cursor = str('cursor');
  // Pending records belong in the answer: a client that just finished a stream expects it listed.
  // Bounded: during a database outage the list answers from what is stored instead of hanging.
  await flushBriefly(ctx);
  const page = await store.list(query);
  sendJson(
    res,
    200,
    { object: 'list', data: page.data.map(recordJson), has_more: page.nextCursor !== null, next_cursor: page.nextCursor },
    { 'X-Request-ID': requestId },
  );
}

const FLUSH_WAIT_MS = 2_000;

async function flushBriefly(ctx: GatewayContext): Promise<void> {
  const ledger = ctx.accounting.ledger;
  if (!ledger || ledger.pending === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([ledger.flush(), new Promise<void>((r) => (timer = setTimeout(r, FLUSH_WAIT_MS)))]);
  clearTimeout(timer);
}

import { errors } from '../../errors/catalog.ts';
import { parseWith } from '../../governance/keys/admin-requests.ts';
import { readJsonBody } from '../../protocol/http/read-json-body.ts';
import { sendJson } from '../../protocol/http/send-json.ts';
import { MAX_RANGE_DAYS, type Reconciler, type RunResult } from '../../reconcile/reconciler.ts';
import { runReconciliationSchema } from '../../reconcile/run-request.ts';
import type { StoredReconciliation } from '../../store/reconcile-store.ts';
import { readStore } from '../../store/read-store.ts';
import type { RouteCall } from '../route-table.ts';

/** What GET /admin/reconciliations reads; any other parameter is refused (route-table.ts). */
export const RECONCILIATIONS_QUERY = ['provider', 'limit'] as const;

/** A stored run as the admin API shows it (docs/operations/reconciliation.md "The result"). */
export function reconciliationJson(r: StoredReconciliation): Record<string, unknown> {
  const result = r.result === null ? null : (JSON.parse(r.result) as RunResult);
  const c = result?.comparison;
  return {
    object: 'sluice.reconciliation',
    id: r.id,
    provider: r.provider,
    report: result?.report ?? null,
    from: r.fromDay,
    to: r.toDay,
    created_at: new Date(r.createdAt).toISOString(),
    trigger: r.trigger,
    status: r.status,
    error: r.error,
    threshold: result?.threshold ?? null,
    totals: c?.totals ?? null,
    lines: c?.lines ?? [],
    zero_priced: c?.zeroPriced ?? [],
    missing_days: c?.missingDays.map((m) => ({ day: m.day, missing_in: m.missingIn })) ?? [],
    reasons: c?.reasons ?? [],
    notes: result?.notes ?? [],
  };
}

/** The reconciler, or a 400 when the ledger is off: there is nothing to reconcile. */
function reconcilerOf(call: RouteCall): Reconciler {
  if (!call.ctx.config.ledger.enabled)
    throw errors.invalidRequest('Reconciliation reads the ledger, which is off (ledger.enabled: false).');
  return call.ctx.reconciler;
}

/** GET /admin/reconciliations?provider=&limit=: the stored runs, newest first (limit 1 to 100, 20). */
export async function handleListReconciliations(call: RouteCall): Promise<void> {
  const provider = call.search.get('provider') ?? undefined;
  if (provider?.includes('\0')) throw errors.invalidRequest('provider contains a NUL byte.', 'provider');
  const limitText = call.search.get('limit');
  const limit = limitText === null ? 20 : Number(limitText);
  if (limitText !== null && (!/^\d+$/.test(limitText) || limit < 1 || limit > 100)) {
    throw errors.invalidRequest('limit must be an integer from 1 to 100.', 'limit');
  }
  const runs = await readStore(call.ctx, reconcilerOf(call).list({ provider, limit }));
  sendJson(call.res, 200, { object: 'list', data: runs.map(reconciliationJson) }, { 'X-Request-ID': call.requestId });
}

/**
 * POST /admin/reconciliations {provider, from, to}: reconciles the ledger against the provider's
 * report over those UTC days, stores the result and answers it (`status` ok or over); a report
 * that could not be read is a 502 provider_report_unavailable (its failed run stored too).
 */
export async function handleRunReconciliation(call: RouteCall): Promise<void> {
  const reconciler = reconcilerOf(call);
  const body = parseWith(runReconciliationSchema, await readJsonBody(call.req, call.ctx.config.server.body_limit_bytes));
  if (body.to < body.from) throw errors.invalidRequest('to must not be before from.', 'to');
  const span = (Date.parse(body.to) - Date.parse(body.from)) / 86_400_000 + 1;
  if (span > MAX_RANGE_DAYS) throw errors.invalidRequest(`A reconciliation covers at most ${MAX_RANGE_DAYS} days.`, 'to');
  const run = await reconciler.run(body.provider, body.from, body.to, 'manual');
  sendJson(call.res, 200, reconciliationJson(run), { 'X-Request-ID': call.requestId });
}

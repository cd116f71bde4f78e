import { errors } from '../../errors/catalog.ts';
import { sendJson } from '../../protocol/http/send-json.ts';
import type { AuditEntry, AuditQuery } from '../../store/audit-store.ts';
import { InvalidLedgerQuery } from '../../store/invalid-ledger-query.ts';
import { readStore } from '../../store/read-store.ts';
import type { RouteCall } from '../route-table.ts';
import { parseTime } from './requests.ts';

/** What GET /admin/audit reads (parseAuditQuery); any other parameter is refused (route-table.ts). */
export const AUDIT_QUERY = ['actor', 'action', 'target_type', 'target_id', 'from', 'to', 'limit', 'cursor'] as const;

/** An entry as GET /admin/audit shows it (times as ISO 8601, like the request log). */
export function auditJson(e: AuditEntry): Record<string, unknown> {
  return {
    object: 'sluice.audit_entry',
    id: e.id,
    created_at: new Date(e.createdAt).toISOString(),
    actor: e.actor,
    action: e.action,
    target: e.target,
    before: e.before,
    after: e.after,
    request_id: e.requestId,
    client_address: e.clientAddress,
    error_code: e.errorCode,
  };
}

/**
 * GET /admin/audit?actor=&action=&target_type=&target_id=&from=&to=&limit=&cursor=: the audit
 * log, newest first, a page of `limit` (50; 1 to 1000) and `next_cursor` for the next one.
 */
export async function handleListAudit(call: RouteCall): Promise<void> {
  const query = parseAuditQuery(call.search);
  const store = call.ctx.audit.reader();
  try {
    const page = await readStore(call.ctx, store.list(query));
    sendJson(
      call.res,
      200,
      { object: 'list', data: page.data.map(auditJson), has_more: page.nextCursor !== null, next_cursor: page.nextCursor },
      { 'X-Request-ID': call.requestId },
    );
  } catch (err) {
    if (err instanceof InvalidLedgerQuery) throw errors.invalidRequest(err.message, err.param);
    throw err;
  }
}

/** Every parameter checked here, so a bad one is a 400 naming it on both engines, never a 500. */
function parseAuditQuery(search: URLSearchParams): AuditQuery {
  const text = (k: string) => {
    const v = search.get(k) ?? undefined;
    // PostgreSQL refuses NUL in text; no id or action holds one.
    if (v?.includes('\0')) throw errors.invalidRequest(`${k} contains a NUL byte.`, k);
    return v;
  };
  const query: AuditQuery = {
    actor: text('actor'),
    action: text('action'),
    targetType: text('target_type'),
    targetId: text('target_id'),
    cursor: text('cursor'),
  };
  for (const k of ['from', 'to'] as const) {
    const v = text(k);
    if (v !== undefined) query[k] = parseTime(v, k);
  }
  const limit = text('limit');
  if (limit !== undefined) {
    const n = Number(limit);
    if (!/^\d+$/.test(limit) || n < 1 || n > 1000)
      throw errors.invalidRequest('limit must be an integer from 1 to 1000.', 'limit');
    query.limit = n;
  }
  return query;
}

import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LedgerRecord } from '../../accounting/ledger-record.ts';
import { recordJson } from '../../accounting/record-json.ts';
import { errors } from '../../errors/catalog.ts';
import { readableProject } from '../../governance/keys/project-scope.ts';
import type { Caller } from '../../admission/admission.ts';
import { InvalidLedgerQuery } from '../../store/invalid-ledger-query.ts';
import type { LedgerQuery, LedgerStore } from '../../store/ledger-store.ts';
import type { GatewayContext } from '../gateway-context.ts';
import { openLedgerStore, readStore } from '../../store/read-store.ts';
import { isRequestId } from '../request-id.ts';
import { sendJson } from '../../protocol/http/send-json.ts';

const OUTCOMES = new Set(['ok', 'error', 'cancelled', 'interrupted']);

/** What GET /v1/requests reads (parseListQuery); any other parameter is refused (route-table.ts). */
export const LIST_REQUESTS_QUERY = [
  'model',
  'provider',
  'outcome',
  'key_id',
  'project_id',
  'since',
  'until',
  'limit',
  'cursor',
  'order',
  'after',
] as const;

/**
 * GET /v1/requests/{id}: the id from X-Request-ID, or the `chatcmpl-…` / `resp_…` id a client
 * saw in the stream. Records are written in the background, so a lookup right after a stream
 * first flushes what is pending. A project key sees its project's records only (another
 * project's id is a 404, like an unknown one).
 */
export async function handleGetRequest(
  res: ServerResponse,
  ctx: GatewayContext,
  id: string,
  requestId: string,
  caller: Caller | null,
) {
  const project = readableProject(caller);
  const store = openLedgerStore(ctx);
  const bare = id.replace(/^(chatcmpl-|resp_)/, '');
  const record = (await readStore(ctx, store.get(bare))) ?? (isRequestId(bare) ? await awaitRecord(ctx, store, bare) : undefined);
  if (!record || (project !== undefined && record.projectId !== project)) throw errors.requestNotFound(id);
  sendJson(res, 200, recordJson(record), { 'X-Request-ID': requestId });
}

/**
 * Read your writes: a request's record is written in batches after its response ended, so a
 * lookup right after it can come first. Here: wait for the record being settled, flush what is
 * buffered, and, since the request may have ended on another instance (whose buffer this one
 * cannot flush), poll the store for up to two flush intervals (at most FLUSH_WAIT_MS) before answering 404.
 */
async function awaitRecord(ctx: GatewayContext, store: LedgerStore, id: string): Promise<LedgerRecord | undefined> {
  const settling = ctx.settling.get(id);
  if (settling) await Promise.race([settling, sleep(FLUSH_WAIT_MS)]);
  await flushBriefly(ctx);
  // Two flush intervals, within the same bound as the flush wait: a long interval must not hold every 404.
  const deadline = Date.now() + Math.min(2 * ctx.config.ledger.flush_interval_ms + 100, FLUSH_WAIT_MS);
  for (;;) {
    const record = await readStore(ctx, store.get(id));
    if (record || Date.now() >= deadline) return record;
    await sleep(25);
  }
}

/**
 * GET /v1/requests?model=&provider=&outcome=&since=&until=&limit=&cursor=: newest first.
 * With order=asc&after=: oldest first in the order records were written, which is the order
 * requests ended; `next_cursor` is then where to poll from next (`sluice logs --follow`).
 * A project key lists its project's records only.
 */
export async function handleListRequests(
  res: ServerResponse,
  ctx: GatewayContext,
  search: URLSearchParams,
  requestId: string,
  caller: Caller | null,
) {
  const project = readableProject(caller);
  const store = openLedgerStore(ctx);
  const query = parseListQuery(search);
  // A project key's own project wins over any project_id it asks for.
  if (project !== undefined) query.filters.projectId = project;
  // Pending records belong in the answer: a client that just finished a stream expects it listed.
  // Bounded: during a database outage the list answers from what is stored instead of hanging,
  // and the flush and the read together within the query timeout (half of it at most for the flush).
  const started = Date.now();
  const timeoutMs = ctx.config.store.query_timeout_ms;
  await flushBriefly(ctx, Math.min(FLUSH_WAIT_MS, timeoutMs / 2));
  const readWithin = timeoutMs - (Date.now() - started);
  const headers = { 'X-Request-ID': requestId };
  try {
    if (query.order === 'asc') {
      const page = await readStore(ctx, store.listInWriteOrder({ ...query.filters, after: query.after }), readWithin);
      sendJson(
        res,
        200,
        { object: 'list', data: page.data.map(recordJson), has_more: page.hasMore, next_cursor: page.nextCursor },
        headers,
      );
      return;
    }
    const page = await readStore(ctx, store.list({ ...query.filters, cursor: query.cursor }), readWithin);
    const body = {
      object: 'list',
      data: page.data.map(recordJson),
      has_more: page.nextCursor !== null,
      next_cursor: page.nextCursor,
      follow_cursor: page.followCursor,
    };
    sendJson(res, 200, body, headers);
  } catch (err) {
    if (err instanceof InvalidLedgerQuery) throw errors.invalidRequest(err.message, err.param);
    throw err;
  }
}

interface ListQuery {
  order: 'asc' | 'desc';
  filters: Omit<LedgerQuery, 'cursor'>;
  cursor?: string;
  after?: string;
}

/** Every parameter checked here, so a bad one is a 400 naming it on every engine, never a 500. */
function parseListQuery(search: URLSearchParams): ListQuery {
  const text = (k: string) => {
    const v = search.get(k) ?? undefined;
    // PostgreSQL refuses NUL in text; no id, model or provider contains one.
    if (v?.includes('\0')) throw errors.invalidRequest(`${k} contains a NUL byte.`, k);
    return v;
  };
  const filters: ListQuery['filters'] = {
    model: text('model'),
    provider: text('provider'),
    keyId: text('key_id'),
    projectId: text('project_id'),
  };
  const outcome = text('outcome');
  if (outcome !== undefined) {
    if (!OUTCOMES.has(outcome)) throw errors.invalidRequest('outcome must be ok, error, cancelled or interrupted.', 'outcome');
    filters.outcome = outcome as LedgerQuery['outcome'];
  }
  for (const k of ['since', 'until'] as const) {
    const v = text(k);
    if (v !== undefined) filters[k] = parseTime(v, k);
  }
  const limit = text('limit');
  if (limit !== undefined) {
    const n = Number(limit);
    if (!/^\d+$/.test(limit) || n < 1 || n > 1000)
      throw errors.invalidRequest('limit must be an integer from 1 to 1000.', 'limit');
    filters.limit = n;
  }
  const order = text('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw errors.invalidRequest('order must be asc or desc.', 'order');
  const cursor = text('cursor');
  const after = text('after');
  if (order === 'asc' && cursor !== undefined) {
    throw errors.invalidRequest('With order=asc, continue with after=<next_cursor>, not cursor.', 'cursor');
  }
  if (order === 'desc' && after !== undefined) throw errors.invalidRequest('after needs order=asc.', 'after');
  return { order, filters, cursor, after };
}

/** The latest time a Date can hold (and well inside a bigint). */
const MAX_TIME_MS = 8.64e15;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/** Epoch milliseconds (an integer) or an ISO 8601 date; Date.parse alone takes "1.5" as a date in 2001. */
export function parseTime(value: string, param: string): number {
  const t = /^\d{1,16}$/.test(value) ? Number(value) : ISO_DATE.test(value) ? Date.parse(value) : Number.NaN;
  if (!Number.isSafeInteger(t) || t > MAX_TIME_MS) {
    throw errors.invalidRequest(`${param} must be an ISO 8601 date or whole epoch milliseconds (at most ${MAX_TIME_MS}).`, param);
  }
  return t;
}

const FLUSH_WAIT_MS = 2_000;

/** Nothing is waited for while the writer is failing: a read during an outage is bounded by the query timeout alone. */
async function flushBriefly(ctx: GatewayContext, waitMs = FLUSH_WAIT_MS): Promise<void> {
  const ledger = ctx.accounting.ledger;
  if (!ledger || ledger.pending === 0 || ledger.failing) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([ledger.flush(), new Promise<void>((r) => (timer = setTimeout(r, waitMs)))]);
  clearTimeout(timer);
}

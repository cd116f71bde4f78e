import { type Kysely, sql } from 'kysely';
import type { Database } from './database.ts';

const DAY_MS = 86_400_000;

/** A day and model's sums of one provider's ledger rows (days as epoch ms of their UTC start). */
export interface LedgerDayRow {
  dayStart: number;
  model: string;
  requests: number;
  input: number;
  cached: number;
  output: number;
  cost: number;
  unpriced: number;
}

/**
 * One provider's ledger rows in [from, to), summed per UTC day and model. Read from the ledger
 * itself, not from spend_days: the rollups keep neither the cached tokens nor which rows had no
 * price, and both are what a reconciliation compares. The (provider, created_at) index reads the
 * range's rows of that provider only (on PostgreSQL, of the range's partitions only); a run reads
 * a few days once a day. MCP tool calls are not the provider's usage.
 */
export async function readLedgerDays(db: Kysely<Database>, provider: string, from: number, to: number): Promise<LedgerDayRow[]> {
  const day = sql<number>`cast(created_at / ${sql.lit(DAY_MS)} as bigint) * ${sql.lit(DAY_MS)}`;
  const rows = await db
    .selectFrom('ledger')
    .select([
      day.as('day_start'),
      'model',
      sql<number>`count(*)`.as('requests'),
      sql<number>`coalesce(sum(input_tokens), 0)`.as('input'),
      sql<number>`coalesce(sum(cached_input_tokens), 0)`.as('cached'),
      sql<number>`coalesce(sum(output_tokens), 0)`.as('output'),
      sql<number>`coalesce(sum(cost_usd), 0)`.as('cost'),
      sql<number>`coalesce(sum(case when price_known = 0 and input_tokens + output_tokens > 0 then 1 else 0 end), 0)`.as(
        'unpriced',
      ),
    ])
    .where('provider', '=', provider)
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .where('surface', '<>', 'mcp')
    .groupBy([day, 'model'])
    .execute();
  return rows.map((r) => ({
    dayStart: Number(r.day_start),
    model: r.model,
    requests: Number(r.requests),
    input: Number(r.input),
    cached: Number(r.cached),
    output: Number(r.output),
    cost: Number(r.cost),
    unpriced: Number(r.unpriced),
  }));
}

/**
 * The upstream request ids of one provider's ledger rows in [from, to), oldest first, at most
 * `limit`: what a per-generation report (OpenRouter's) is looked up by.
 */
export async function readUpstreamIds(
  db: Kysely<Database>,
  provider: string,
  from: number,
  to: number,
  limit: number,
): Promise<{ upstreamId: string; createdAt: number }[]> {
  const rows = await db
    .selectFrom('ledger')
    .select(['upstream_request_id', 'created_at'])
    .where('provider', '=', provider)
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .where('upstream_request_id', 'is not', null)
    .where('surface', '<>', 'mcp')
    .orderBy('created_at')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ upstreamId: String(r.upstream_request_id), createdAt: Number(r.created_at) }));
}

/** A stored reconciliation (migration 0024); `result` is the comparison as JSON text. */
export interface StoredReconciliation {
  id: string;
  provider: string;
  fromDay: string;
  toDay: string;
  createdAt: number;
  trigger: 'manual' | 'schedule';
  status: 'ok' | 'over' | 'failed';
  error: string | null;
  result: string | null;
}

export async function saveReconciliation(db: Kysely<Database>, r: StoredReconciliation): Promise<void> {
  await db
    .insertInto('reconciliations')
    .values({
      id: r.id,
      provider: r.provider,
      from_day: r.fromDay,
      to_day: r.toDay,
      created_at: r.createdAt,
      trigger: r.trigger,
      status: r.status,
      error: r.error,
      result: r.result,
    })
    .execute();
}

/** The newest reconciliations first, of one provider or all (and of one trigger or both), at most `limit`. */
export async function listReconciliations(
  db: Kysely<Database>,
  q: { provider?: string; trigger?: StoredReconciliation['trigger']; limit: number },
): Promise<StoredReconciliation[]> {
  let query = db.selectFrom('reconciliations').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit);
  if (q.provider !== undefined) query = query.where('provider', '=', q.provider);
  if (q.trigger !== undefined) query = query.where('trigger', '=', q.trigger);
  const rows = await query.execute();
  return rows.map((r) => ({
    id: r.id,
    provider: r.provider,
    fromDay: r.from_day,
    toDay: r.to_day,
    createdAt: Number(r.created_at),
    trigger: r.trigger as StoredReconciliation['trigger'],
    status: r.status as StoredReconciliation['status'],
    error: r.error,
    result: r.result,
  }));
}

/** Deletes the results stored before `before` (epoch ms): reconcile.keep_days. */
export async function pruneReconciliations(db: Kysely<Database>, before: number): Promise<void> {
  await db.deleteFrom('reconciliations').where('created_at', '<', before).execute();
}

/**
 * Takes the named lock until `until` (epoch ms) unless another holder has it unexpired: one
 * instance at a time runs a provider's reconciliation, whichever instances share the store. An
 * expired lock (its holder died mid-run) is taken over.
 */
export async function takeLock(db: Kysely<Database>, name: string, holder: string, now: number, until: number): Promise<boolean> {
  await db.deleteFrom('reconcile_locks').where('name', '=', name).where('expires_at', '<', now).execute();
  await db
    .insertInto('reconcile_locks')
    .values({ name, holder, expires_at: until })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('reconcile_locks').select('holder').where('name', '=', name).executeTakeFirst();
  return row?.holder === holder;
}

export async function releaseLock(db: Kysely<Database>, name: string, holder: string): Promise<void> {
  await db.deleteFrom('reconcile_locks').where('name', '=', name).where('holder', '=', holder).execute();
}

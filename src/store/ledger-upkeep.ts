import { type Kysely, sql } from 'kysely';
import type { Database } from './database.ts';
import { engineOf } from './engine-of.ts';
import {
  aheadOf,
  defaultPartitionOf,
  dropPartitionsBefore,
  ensurePartitions,
  type PartitionedTable,
} from './ledger-partitions.ts';
import { MINUTE_HISTOGRAMS, MINUTES_ACROSS_PROJECTS, ROLLUPS } from './rollup-tables.ts';
import { SPEND_PROJECT_DAYS, SPEND_ROLLUPS } from './spend-tables.ts';

export type RollupResolution = 'minute' | 'hour' | 'day';

/** `ledger.retention` in days; absent: kept for good. */
export interface Retention {
  rowsDays?: number;
  /** Never longer than the rows': content without its row is dropped with it. */
  contentDays?: number;
  rollupDays: Partial<Record<RollupResolution, number>>;
}

/** A rollup table, the column of its period's start, and the retention it follows. */
export interface RollupTable {
  table: string;
  column: string;
  resolution: RollupResolution;
}

/**
 * Every rollup table: the charts' (per minute, by project and across them, and per hour) and the
 * spend report's (per hour and day, with and without tags, and per day by project alone).
 */
const ROLLUP_TABLES: readonly RollupTable[] = [
  { table: ROLLUPS.minutes.table, column: ROLLUPS.minutes.column, resolution: 'minute' },
  { table: MINUTES_ACROSS_PROJECTS.table, column: MINUTES_ACROSS_PROJECTS.column, resolution: 'minute' },
  { table: MINUTE_HISTOGRAMS.table, column: MINUTE_HISTOGRAMS.column, resolution: 'minute' },
  { table: ROLLUPS.hours.table, column: ROLLUPS.hours.column, resolution: 'hour' },
  ...(['hours', 'days'] as const).flatMap((period) =>
    [SPEND_ROLLUPS[period].table, SPEND_ROLLUPS[period].tagTable].map((table) => ({
      table,
      column: 'period_start',
      resolution: period === 'hours' ? ('hour' as const) : ('day' as const),
    })),
  ),
  { table: SPEND_PROJECT_DAYS.table, column: 'period_start', resolution: 'day' },
];

export interface UpkeepReport {
  /** Another instance was doing it (PostgreSQL): nothing done. */
  skipped: boolean;
  created: string[];
  dropped: string[];
  /** What the dropped partitions held, in bytes. */
  bytesFreed: number;
  /** Rows deleted one by one: SQLite's retention, PostgreSQL's default partitions and rollups. */
  deleted: number;
}

const DAY_MS = 86_400_000;
/** SQLite deletes at most this many rows a statement, and this many statements a table a run. */
const SQLITE_BATCH = 5_000;
const SQLITE_BATCHES = 20;
/** Stray rows of a default partition deleted a run: it holds only what fell outside every partition. */
const DEFAULT_PARTITION_BATCH = 10_000;

/**
 * What keeps the ledger's size in line with `ledger.retention`, run by every instance now and
 * then (open-ledger.ts):
 * - PostgreSQL: under a transaction-level advisory lock (one instance at a time, none held past
 *   the transaction, so it fits a transaction-mode pooler), creates the partitions of the coming
 *   spans and drops those wholly past their retention; no row of a partition is deleted one by one.
 * - SQLite: deletes rows past their retention in bounded batches (SQLITE_BATCH x SQLITE_BATCHES
 *   a table a run), so a run never holds the single writer for long; the file does not shrink
 *   (the pages are reused), which docs/operations/retention.md states.
 */
export async function upkeepLedger(db: Kysely<Database>, retention: Retention, now: number): Promise<UpkeepReport> {
  const cutoffs = cutoffsOf(retention, now);
  if (engineOf(db) === 'postgres') return upkeepPostgres(db, cutoffs, now);
  const report: UpkeepReport = { skipped: false, created: [], dropped: [], bytesFreed: 0, deleted: 0 };
  if (cutoffs.rows !== undefined) report.deleted += await deleteSqlite(db, 'ledger', 'created_at', cutoffs.rows);
  if (cutoffs.content !== undefined) report.deleted += await deleteSqlite(db, 'ledger_content', 'created_at', cutoffs.content);
  for (const { table, column, cutoff } of cutoffs.rollups) report.deleted += await deleteSqlite(db, table, column, cutoff);
  return report;
}

/** Epoch ms before which each kind goes; absent: kept. */
export interface Cutoffs {
  rows?: number;
  content?: number;
  rollups: (Omit<RollupTable, 'resolution'> & { cutoff: number })[];
}

/** `ledger.retention` as cutoffs at `now`: content never outlives its rows. */
export function cutoffsOf(retention: Retention, now: number): Cutoffs {
  const before = (days: number | undefined) => (days === undefined ? undefined : now - days * DAY_MS);
  const rows = before(retention.rowsDays);
  const content = before(retention.contentDays);
  const rollups: Cutoffs['rollups'] = [];
  for (const { table, column, resolution } of ROLLUP_TABLES) {
    const cutoff = before(retention.rollupDays[resolution]);
    if (cutoff !== undefined) rollups.push({ table, column, cutoff });
  }
  return { rows, content: content === undefined ? rows : rows === undefined ? content : Math.max(rows, content), rollups };
}

async function upkeepPostgres(db: Kysely<Database>, cutoffs: Cutoffs, now: number): Promise<UpkeepReport> {
  return db.transaction().execute(async (trx) => {
    const report: UpkeepReport = { skipped: false, created: [], dropped: [], bytesFreed: 0, deleted: 0 };
    // Advisory locks are per database: the schema in the key keeps deployments sharing one apart.
    const { rows } = await sql<{ locked: boolean }>`
      select pg_try_advisory_xact_lock(hashtext('sluice.ledger_upkeep:' || current_schema())) as locked`.execute(trx);
    if (!rows[0]?.locked) return { ...report, skipped: true };
    // Creating or dropping a partition takes a brief exclusive lock on its table: behind a long
    // query it would queue every insert behind it, so it gives up instead (and is tried again next run).
    await sql`set local lock_timeout = '2s'`.execute(trx);
    for (const [table, cutoff] of [
      ['ledger', cutoffs.rows],
      ['ledger_content', cutoffs.content],
    ] as [PartitionedTable, number | undefined][]) {
      report.created.push(...(await ensurePartitions(trx, table, now, aheadOf(table, now))));
      if (cutoff === undefined) continue;
      const { dropped, bytes } = await dropPartitionsBefore(trx, table, cutoff);
      report.dropped.push(...dropped);
      report.bytesFreed += bytes;
      const strays = await sql`
        delete from ${sql.table(defaultPartitionOf(table))} where ctid in (
          select ctid from ${sql.table(defaultPartitionOf(table))} where created_at < ${cutoff} limit ${DEFAULT_PARTITION_BATCH})`.execute(
        trx,
      );
      report.deleted += Number(strays.numAffectedRows ?? 0);
    }
    // The rollups are small (a row a period and provider/model): a range delete on their key.
    for (const { table, column, cutoff } of cutoffs.rollups) {
      const result = await sql`delete from ${sql.table(table)} where ${sql.ref(column)} < ${cutoff}`.execute(trx);
      report.deleted += Number(result.numAffectedRows ?? 0);
    }
    return report;
  });
}

async function deleteSqlite(db: Kysely<Database>, table: string, column: string, cutoff: number): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < SQLITE_BATCHES; i++) {
    const result = await sql`
      delete from ${sql.table(table)} where rowid in (
        select rowid from ${sql.table(table)} where ${sql.ref(column)} < ${cutoff} limit ${SQLITE_BATCH})`.execute(db);
    const n = Number(result.numAffectedRows ?? 0);
    deleted += n;
    if (n < SQLITE_BATCH) break;
  }
  return deleted;
}

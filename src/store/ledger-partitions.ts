import { type Kysely, sql } from 'kysely';
import { nextSpan, parseBounds, partitionName, type Span, spanStart, spansBetween } from './partition-spans.ts';

/**
 * PostgreSQL's ledger tables are partitioned by range of created_at (migration 0021), each with
 * its span and how many spans ahead the instances keep created (ledger-upkeep.ts):
 * - the ledger by month. Every query without a time bound (one request by id, a key's page, the
 *   live log) plans and opens every partition: twelve a year keep that under a millisecond, 365
 *   daily ones cost several. Its retention is then kept to the month: a row goes with its month,
 *   once the whole month is past `ledger.retention.rows_days`.
 * - the stored prompts and completions by day: their retention is usually short and is a privacy
 *   promise, kept to the day; and they are only ever read with their row's created_at, so a read
 *   opens one partition however many there are.
 * A row outside every partition (a clock far off, a journal replayed after its month was
 * dropped) goes to the table's default partition, so an insert never fails for want of one.
 */
export const PARTITIONED = {
  ledger: { span: 'month', ahead: 2 },
  ledger_content: { span: 'day', ahead: 7 },
} as const satisfies Record<string, { span: Span; ahead: number }>;
export type PartitionedTable = keyof typeof PARTITIONED;

export interface Partition {
  name: string;
  from: number;
  to: number;
}

/** The start of the span `ahead` spans after the one holding `at`: the last the instances keep created. */
export function aheadOf(table: PartitionedTable, at: number): number {
  const { span, ahead } = PARTITIONED[table];
  let start = spanStart(span, at);
  for (let i = 0; i < ahead; i++) start = nextSpan(span, start);
  return start;
}

export const defaultPartitionOf = (table: PartitionedTable) => `${table}_default`;

/** The range partitions of `parent` (default: the table itself), oldest first. */
export async function partitionsOf<DB>(db: Kysely<DB>, parent: string): Promise<Partition[]> {
  const { rows } = await sql<{ name: string; bound: string }>`
    select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = to_regclass(${parent})`.execute(db);
  const partitions: Partition[] = [];
  for (const row of rows) {
    const bounds = parseBounds(row.bound);
    if (bounds) partitions.push({ name: row.name, ...bounds });
  }
  return partitions.toSorted((a, b) => a.from - b.from);
}

/**
 * Creates the partitions of the spans from the one holding `from` to the one holding `to` that
 * are missing; returns their names. The caller holds the lock that serializes this (the
 * upkeep's advisory lock, or the migration's). Rows of a new span already in the default
 * partition are moved into it, in the same transaction.
 */
export async function ensurePartitions<DB>(
  db: Kysely<DB>,
  table: PartitionedTable,
  from: number,
  to: number,
  parent: string = table,
): Promise<string[]> {
  const { span } = PARTITIONED[table];
  const existing = new Set((await partitionsOf(db, parent)).map((p) => p.from));
  const created: string[] = [];
  for (const start of spansBetween(span, from, to)) {
    if (existing.has(start)) continue;
    const name = partitionName(table, span, start);
    await createPartition(db, table, parent, name, start, nextSpan(span, start));
    created.push(name);
  }
  return created;
}

async function createPartition<DB>(
  db: Kysely<DB>,
  table: PartitionedTable,
  parent: string,
  name: string,
  from: number,
  to: number,
) {
  const fallback = defaultPartitionOf(table);
  const { rows } = await sql<{ stray: boolean }>`
    select exists (select 1 from ${sql.table(fallback)} where created_at >= ${from} and created_at < ${to}) as stray`.execute(db);
  const bounds = sql`for values from (${sql.lit(from)}) to (${sql.lit(to)})`;
  if (!rows[0]?.stray) {
    await sql`create table ${sql.table(name)} partition of ${sql.table(parent)} ${bounds}`.execute(db);
    return;
  }
  // Attaching a span the default partition holds rows of is refused: they move over first.
  await sql`create table ${sql.table(name)} (like ${sql.table(parent)} including defaults)`.execute(db);
  await sql`
    with moved as (delete from ${sql.table(fallback)} where created_at >= ${from} and created_at < ${to} returning *)
    insert into ${sql.table(name)} select * from moved`.execute(db);
  await sql`alter table ${sql.table(parent)} attach partition ${sql.table(name)} ${bounds}`.execute(db);
}

/**
 * Drops the partitions of `table` whose whole span ends at or before `cutoff`: the space goes
 * back to the system at once, with no dead rows to vacuum. Returns their names and bytes.
 */
export async function dropPartitionsBefore<DB>(
  db: Kysely<DB>,
  table: PartitionedTable,
  cutoff: number,
): Promise<{ dropped: string[]; bytes: number }> {
  const old = (await partitionsOf(db, table)).filter((p) => p.to <= cutoff);
  let bytes = 0;
  for (const { name } of old) {
    const { rows } = await sql<{ bytes: number | string }>`select pg_total_relation_size(to_regclass(${name})) as bytes`.execute(
      db,
    );
    bytes += Number(rows[0]?.bytes ?? 0);
    await sql`drop table ${sql.table(name)}`.execute(db);
  }
  return { dropped: old.map((p) => p.name), bytes };
}

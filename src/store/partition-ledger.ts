import { type Kysely, sql } from 'kysely';
import { engineOf } from './engine-of.ts';
import { aheadOf, defaultPartitionOf, ensurePartitions } from './ledger-partitions.ts';

/**
 * Migration 0021: stored prompts and completions move to a table of their own (ledger_content),
 * with a retention of their own; on PostgreSQL the ledger becomes a table partitioned by month
 * of created_at (ledger-partitions.ts says why a month), so retention drops whole partitions.
 *
 * PostgreSQL: the old ledger is locked against writes (reads go on), every row is copied into
 * the partitioned table in one statement, the old table dropped and the new one renamed, all in
 * the migration's transaction: a row is moved once or, if anything fails, not at all and the old
 * table is as it was. Instances of the previous version cannot write to the new table (its
 * primary key is (request_id, created_at), their insert names prompt and completion): the
 * upgrade stops them first (docs/operations/upgrade.md).
 */

/**
 * The ledger's columns, wide ones first: PostgreSQL aligns 8-byte values on 8 bytes, so
 * grouping them before the 4-byte ones and the texts leaves no padding inside a row.
 */
const LEDGER_COLUMNS_SQL = `
  created_at bigint not null,
  input_tokens bigint not null,
  cached_input_tokens bigint not null,
  cache_write_tokens bigint not null,
  output_tokens bigint not null,
  reasoning_tokens bigint not null,
  cost_usd double precision not null,
  seq bigint not null default nextval('ledger_write_seq'),
  txid bigint not null default txid_current(),
  audio_input_tokens bigint,
  audio_output_tokens bigint,
  accepted_prediction_tokens bigint,
  rejected_prediction_tokens bigint,
  overhead_ms double precision,
  streamed integer not null,
  price_known integer not null,
  latency_ms integer not null,
  ttft_ms integer,
  upstream_status integer,
  request_id text not null,
  key_id text,
  project_id text,
  provider text not null,
  model text not null,
  requested_model text not null,
  surface text not null,
  usage_source text not null,
  outcome text not null,
  error_type text,
  error_code text,
  error_message text,
  finish_reason text,
  upstream_request_id text,
  upstream_error_type text,
  upstream_error_code text,
  billing text,
  attempts text,
  tags text`;

const COPIED_COLUMNS = LEDGER_COLUMNS_SQL.split(',')
  .map((line) => line.trim().split(' ')[0])
  .join(', ');

/**
 * The ledger's indexes (migrations 0001-0014, and 0030's two), the same on the partitioned table:
 * each partition gets its own. A store that runs 0021 after this list grew builds 0030's indexes
 * there, and 0030 finds them built.
 */
const LEDGER_INDEXES: [string, string][] = [
  ['ledger_created_at', 'created_at, request_id'],
  ['ledger_model', 'model, created_at'],
  ['ledger_provider', 'provider, created_at'],
  ['ledger_write_order', 'txid, seq'],
  ['ledger_requested_model', 'requested_model, created_at'],
  ['ledger_project', 'project_id, created_at'],
  ['ledger_key', 'key_id, created_at, request_id'],
  ['ledger_outcome', 'outcome, created_at, request_id'],
  ['ledger_key_model', 'key_id, model, created_at, request_id'],
  ['ledger_key_requested_model', 'key_id, requested_model, created_at, request_id'],
];

const CONTENT_COLUMNS_SQL = `
  created_at bigint not null,
  request_id text not null,
  prompt text,
  completion text,
  primary key (request_id, created_at)`;

/** How far back the migration creates monthly partitions for the rows it moves. */
const OLDEST_PARTITIONED_MS = 5 * 366 * 86_400_000;

const HAS_CONTENT = sql`prompt is not null or completion is not null`;

export async function partitionLedgerUp(db: Kysely<unknown>): Promise<void> {
  const postgres = engineOf(db) === 'postgres';
  // Writers of the previous version wait (reads go on) until the migration's transaction ends.
  if (postgres) await sql`lock table ledger in exclusive mode`.execute(db);
  await splitContent(db, postgres);
  if (postgres && !(await isPartitioned(db))) await partitionLedger(db);
}

/** The content table, filled from the ledger's columns, which go (SQLite keeps the rowids; PostgreSQL only marks them dropped). */
async function splitContent(db: Kysely<unknown>, postgres: boolean): Promise<void> {
  if (postgres) {
    await sql.raw(`create table ledger_content (${CONTENT_COLUMNS_SQL}) partition by range (created_at)`).execute(db);
    await sql.raw(`create table ${defaultPartitionOf('ledger_content')} partition of ledger_content default`).execute(db);
    // A partition for each day that has content: most stores have none (store_content is off by default).
    const { rows: days } = await sql<{ day: number }>`
      select distinct created_at / 86400000 as day from ledger where ${HAS_CONTENT}`.execute(db);
    for (const { day } of days) await ensurePartitions(db, 'ledger_content', Number(day) * 86_400_000, Number(day) * 86_400_000);
    await ensurePartitions(db, 'ledger_content', Date.now(), aheadOf('ledger_content', Date.now()));
  } else {
    await sql.raw(`create table ledger_content (${CONTENT_COLUMNS_SQL})`).execute(db);
    await sql`create index ledger_content_created_at on ledger_content (created_at)`.execute(db);
  }
  await sql`insert into ledger_content (request_id, created_at, prompt, completion)
    select request_id, created_at, prompt, completion from ledger where ${HAS_CONTENT}`.execute(db);
  await sql`alter table ledger drop column prompt`.execute(db);
  await sql`alter table ledger drop column completion`.execute(db);
}

/** Migrated down and up again, the ledger is partitioned already (the way down keeps it so). */
async function isPartitioned(db: Kysely<unknown>): Promise<boolean> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from pg_partitioned_table where partrelid = to_regclass('ledger')`.execute(db);
  return (rows[0]?.n ?? 0) > 0;
}

/** Every row into the partitioned table in one statement, then the old table goes and the new one takes its name. */
async function partitionLedger(db: Kysely<unknown>): Promise<void> {
  const now = Date.now();
  const { rows } = await sql<{ first: number | null; last: number | null; seq: number | null }>`
    select min(created_at) as first, max(created_at) as last, max(seq) as seq from ledger`.execute(db);
  // Rows older than that (a clock once far off) go to the default partition, not to years of empty months.
  const first = Math.max(Number(rows[0]?.first ?? now), now - OLDEST_PARTITIONED_MS);
  const last = Math.max(Number(rows[0]?.last ?? now), now);

  await sql`create sequence ledger_write_seq`.execute(db);
  await sql.raw(`create table ledger_partitioned (${LEDGER_COLUMNS_SQL}) partition by range (created_at)`).execute(db);
  await sql.raw(`create table ${defaultPartitionOf('ledger')} partition of ledger_partitioned default`).execute(db);
  await ensurePartitions(db, 'ledger', first, aheadOf('ledger', last), 'ledger_partitioned');
  await sql.raw(`insert into ledger_partitioned (${COPIED_COLUMNS}) select ${COPIED_COLUMNS} from ledger`).execute(db);
  if (rows[0]?.seq != null) await sql`select setval('ledger_write_seq', ${Number(rows[0].seq)})`.execute(db);

  await sql`drop table ledger`.execute(db);
  await sql`alter table ledger_partitioned rename to ledger`.execute(db);
  await sql`alter sequence ledger_write_seq owned by ledger.seq`.execute(db);
  // Built once the rows are in: faster than keeping them up row by row during the copy.
  await indexLedger(db);
}

/** The partitioned ledger's key and indexes (each partition gets its own). */
export async function indexLedger<DB>(db: Kysely<DB>): Promise<void> {
  await sql`alter table ledger add constraint ledger_pkey primary key (request_id, created_at)`.execute(db);
  for (const [name, columns] of LEDGER_INDEXES) await sql.raw(`create index ${name} on ledger (${columns})`).execute(db);
}

/** Drops what indexLedger builds: a bulk load (the ledger bench's) then builds them once, sorted, instead of row by row. */
export async function unindexLedger<DB>(db: Kysely<DB>): Promise<void> {
  await sql`alter table ledger drop constraint ledger_pkey`.execute(db);
  for (const [name] of LEDGER_INDEXES) await sql.raw(`drop index ${name}`).execute(db);
}

/** Back to content in the ledger's columns; the PostgreSQL ledger stays partitioned. */
export async function partitionLedgerDown(db: Kysely<unknown>): Promise<void> {
  await sql`alter table ledger add column prompt text`.execute(db);
  await sql`alter table ledger add column completion text`.execute(db);
  await sql`update ledger set prompt = c.prompt, completion = c.completion
    from ledger_content c where c.request_id = ledger.request_id and c.created_at = ledger.created_at`.execute(db);
  await sql`drop table ledger_content`.execute(db);
}

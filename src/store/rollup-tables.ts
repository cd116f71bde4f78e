import { CompiledQuery, type CreateTableBuilder, type Kysely, type QueryResult, type RawBuilder, sql } from 'kysely';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { Database } from './database.ts';
import { engineOf } from './engine-of.ts';
import {
  acrossModels,
  acrossProjects,
  BUCKET_BOUNDS_MS,
  FAILED,
  NO_PROJECT,
  type RollupCell,
  summarize,
} from './rollup-cells.ts';

/**
 * The console's rollups of the ledger: per minute (ledger_minutes, migration 0012) and per hour
 * (ledger_hours, migration 0015), per project (migration 0023) and provider/model. Written in each ledger batch's transaction
 * from the rows that batch stored (ledger-store.ts), so every ledger row is counted once, by
 * whichever process wrote it; the charts read these, never the ledger.
 */
export const ROLLUPS = {
  minutes: { table: 'ledger_minutes', column: 'minute', periodMs: 60_000 },
  hours: { table: 'ledger_hours', column: 'hour', periodMs: 3_600_000 },
} as const;
export type RollupPeriod = keyof typeof ROLLUPS;

/**
 * The per-minute rollups across projects (migration 0032), ledger_minutes' cells summed over
 * their projects and written in the same batch, for an owner's or admin's charts (a member's keep
 * the per-project table). Summing ledger_minutes' ~111k cells a day (100 projects, 12 models) took
 * 250 ms at 10 M rows (docs/benchmarks/ledger.md). The series (per minute and provider/model,
 * 17k rows a day) and the histograms (per minute only, 1,440 rows a day) are two narrow tables
 * read as they are: one table holding both, 37 columns wide, made the series read carry the
 * histograms' 28 columns and the histograms read sum 17k rows back into 1,440.
 */
export const MINUTES_ACROSS_PROJECTS = { table: 'ledger_minutes_all', column: 'minute' } as const;
export const MINUTE_HISTOGRAMS = { table: 'ledger_minute_histograms', column: 'minute' } as const;

/**
 * Per-minute rows are kept 48 hours by default (ledger.retention.rollups_days.minute, applied by
 * ledger-upkeep.ts): twice the longest per-minute range the console reads (24 hours), so a day's
 * charts never miss their first hours. Records older than this (replayed from a journal after a
 * long stop) add to the hours only. Per-hour rows are kept for good by default (one row per hour,
 * project and provider/model in use, ~8.8k a year per project and pair).
 */
export const MINUTES_KEPT_MS = 48 * 3_600_000;

/** The histogram columns of both tables: one per bucket, the one past the last bound included. */
export const HISTOGRAM_COLUMNS = Array.from({ length: BUCKET_BOUNDS_MS.length + 1 }, (_, i) => i);
const ttftColumn = (i: number) => `ttft_${i}`;
const latencyColumn = (i: number) => `latency_${i}`;
/** The series' columns: what a row of ledger_minutes_all sums. */
const SERIES_SUMMED = ['requests', 'errors', 'input_tokens', 'output_tokens', 'cost_usd'];
const TTFT_COLUMNS = HISTOGRAM_COLUMNS.map(ttftColumn);
const LATENCY_COLUMNS = HISTOGRAM_COLUMNS.map(latencyColumn);
/** The histograms' columns: what a row of ledger_minute_histograms sums. */
export const HISTOGRAM_SUMMED = [...TTFT_COLUMNS, ...LATENCY_COLUMNS];
/** The columns a per-project period's row sums (every one but its key). */
export const SUMMED = [...SERIES_SUMMED, ...HISTOGRAM_SUMMED];

/** Where a batch's cells go: a rollup table, its key (the period's column first) and the columns it sums. */
interface RollupTarget {
  table: string;
  keys: readonly string[];
  summed: readonly string[];
}
const TARGETS = {
  minutes: { table: ROLLUPS.minutes.table, keys: ['minute', 'project_id', 'provider', 'model'], summed: SUMMED },
  hours: { table: ROLLUPS.hours.table, keys: ['hour', 'project_id', 'provider', 'model'], summed: SUMMED },
  minutesAll: { table: MINUTES_ACROSS_PROJECTS.table, keys: ['minute', 'provider', 'model'], summed: SERIES_SUMMED },
  minuteHistograms: { table: MINUTE_HISTOGRAMS.table, keys: ['minute'], summed: HISTOGRAM_SUMMED },
} as const satisfies Record<string, RollupTarget>;
type TargetName = keyof typeof TARGETS;

/** Cells per upsert: at most 37 values a row, well under both engines' bound-parameter limits. */
const UPSERT_CHUNK = 100;

type RollupRow = Record<string, number | string>;
type RollupDatabase = Record<string, RollupRow>;
/**
 * Adds stored records to the four tables, inside the caller's transaction (the batch's). Records
 * whose minute is past MINUTES_KEPT_MS (replayed from a journal after a long stop) go to the
 * hours only: their minute row would be pruned anyway. The minutes across projects are the
 * per-project minutes summed (acrossProjects, then acrossModels for the histograms), so both
 * grains hold the same sums.
 */
export async function addRollups(trx: Kysely<Database>, stored: readonly LedgerRecord[], now: number): Promise<void> {
  if (stored.length === 0) return;
  const minutes = summarize(stored, ROLLUPS.minutes.periodMs).filter((c) => c.start >= now - MINUTES_KEPT_MS);
  await upsert(trx, 'minutes', minutes);
  const minutesAll = acrossProjects(minutes);
  await upsert(trx, 'minutesAll', minutesAll);
  await upsert(trx, 'minuteHistograms', acrossModels(minutesAll));
  await upsert(trx, 'hours', summarize(stored, ROLLUPS.hours.periodMs));
}

async function upsert(trx: Kysely<Database>, target: TargetName, cells: readonly RollupCell[]): Promise<void> {
  const { keys, summed } = TARGETS[target];
  for (let i = 0; i < cells.length; i += UPSERT_CHUNK) {
    const chunk = cells.slice(i, i + UPSERT_CHUNK);
    const params = chunk.flatMap((c) => valuesOf(c, keys, summed));
    await trx.executeQuery(CompiledQuery.raw(upsertSqlFor(trx, target, chunk.length), params));
  }
}

/**
 * Upsert text per engine, table and row count, compiled once (as the ledger's insert is): on
 * PostgreSQL, building Kysely's tree of 37 columns and their update set for every batch was ~1.4
 * ms of a 500-row batch's CPU (profiled).
 */
const upsertSql = new Map<string, string>();

function upsertSqlFor(trx: Kysely<Database>, target: TargetName, count: number): string {
  const key = `${engineOf(trx)}:${target}:${count}`;
  let text = upsertSql.get(key);
  if (text === undefined) {
    const { table, keys, summed } = TARGETS[target];
    const placeholder = Object.fromEntries([...keys, ...summed].map((c) => [c, 0]));
    const update = Object.fromEntries(
      summed.map((c) => [c, sql<number>`${sql.ref(`${table}.${c}`)} + ${sql.ref(`excluded.${c}`)}`]),
    );
    const { sql: compiled, parameters } = (trx as unknown as Kysely<RollupDatabase>)
      .insertInto(table)
      .values(Array.from({ length: count }, () => placeholder))
      .onConflict((oc) => oc.columns([...keys]).doUpdateSet(update))
      .compile();
    if (parameters.length !== count * Object.keys(placeholder).length)
      throw new Error('rollup upsert: every value must be a bound parameter');
    text = compiled;
    upsertSql.set(key, text);
  }
  return text;
}

/**
 * The rows of the periods from `since` (epoch ms) on, of every project or of `projects` only (a
 * member's): one range read of the primary key, whose second column is the project.
 */
export async function readRollups(
  db: Kysely<Database>,
  period: RollupPeriod,
  since: number,
  projects?: readonly string[],
): Promise<RollupCell[]> {
  if (projects?.length === 0) return [];
  const { table, column } = ROLLUPS[period];
  let query = (db as unknown as Kysely<RollupDatabase>).selectFrom(table).selectAll().where(column, '>=', since);
  if (projects) query = query.where('project_id', 'in', projects);
  const rows = await query.execute();
  return rows.map((row) => cellOf(column, row));
}

/** A period's requests, errors, tokens and cost of one provider/model, its projects summed. */
export interface SeriesCell {
  start: number;
  provider: string;
  model: string;
  requests: number;
  errors: number;
  tokens: number;
  costUsd: number;
}

/** A period's TTFT and latency histograms, every provider/model and project summed. */
export interface HistogramCell {
  start: number;
  ttft: number[];
  latency: number[];
}

/**
 * What the console's charts draw from the periods from `since` on (of `projects` only when
 * given), summed by the store rather than in JavaScript: the series per period and provider/model
 * without their 32 histogram columns, and the histograms per period only. A day of minutes for 12
 * models is 17,280 rows of 37 columns read whole (readRollups); here 17,280 of 7 and 1,440 of 33,
 * which is where its time went: parsing the rows, not PostgreSQL's range read
 * (docs/benchmarks/ledger.md).
 */
export async function readCharts(
  db: Kysely<Database>,
  period: RollupPeriod,
  since: number,
  projects?: readonly string[],
): Promise<{ series: SeriesCell[]; histograms: HistogramCell[] }> {
  if (projects?.length === 0) return { series: [], histograms: [] };
  const [series, histograms] =
    period === 'minutes' && !projects
      ? await readAcrossProjects(db, since)
      : await readSummed(db, ROLLUPS[period].table, ROLLUPS[period].column, since, projects);
  return {
    series: series.rows.map((row) => ({
      start: Number(row.start),
      provider: String(row.provider),
      model: String(row.model),
      requests: Number(row.requests),
      errors: Number(row.errors),
      tokens: Number(row.tokens),
      costUsd: Number(row.cost_usd),
    })),
    histograms: histograms.rows.map((row) => ({
      start: Number(row.start),
      ttft: TTFT_COLUMNS.map((c) => Number(row[c])),
      latency: LATENCY_COLUMNS.map((c) => Number(row[c])),
    })),
  };
}

type ChartRows = [QueryResult<Record<string, number | string>>, QueryResult<Record<string, number | string>>];

/**
 * Every project's minutes: the rows of the two tables across projects as they are, one range read
 * of each primary key, no GROUP BY. Their counts are bigint columns (numbers from the pool's
 * parser, open-postgres.ts) and their cost a double, as the per-project sums read it.
 */
function readAcrossProjects(db: Kysely<Database>, since: number): Promise<ChartRows> {
  const start = sql.ref(MINUTES_ACROSS_PROJECTS.column);
  return Promise.all([
    sql<Record<string, number | string>>`
      select ${start} as start, provider, model, requests, errors, input_tokens + output_tokens as tokens, cost_usd
      from ${sql.table(MINUTES_ACROSS_PROJECTS.table)} where ${start} >= ${since}`.execute(db),
    sql<Record<string, number | string>>`
      select ${start} as start, ${sql.join(HISTOGRAM_SUMMED.map((c) => sql.ref(c)))}
      from ${sql.table(MINUTE_HISTOGRAMS.table)} where ${start} >= ${since}`.execute(db),
  ]);
}

/** A per-project table's periods, summed over its projects (every one, or `projects` only). */
function readSummed(
  db: Kysely<Database>,
  table: string,
  column: string,
  since: number,
  projects?: readonly string[],
): Promise<ChartRows> {
  const start = sql.ref(column);
  const where = projects ? sql`${start} >= ${since} and project_id in (${sql.join(projects)})` : sql`${start} >= ${since}`;
  const sum = (c: string) => sql`sum(${sql.ref(c)})`;
  return Promise.all([
    sql<Record<string, number | string>>`
      select ${start} as start, provider, model, ${sum('requests')} as requests, ${sum('errors')} as errors,
        ${sum('input_tokens')} + ${sum('output_tokens')} as tokens, ${sum('cost_usd')} as cost_usd
      from ${sql.table(table)} where ${where} group by ${start}, provider, model`.execute(db),
    sql<Record<string, number | string>>`
      select ${start} as start, ${sql.join(HISTOGRAM_SUMMED.map((c) => sql`${sum(c)} as ${sql.ref(c)}`))}
      from ${sql.table(table)} where ${where} group by ${start}`.execute(db),
  ]);
}

/**
 * Fills a rollup table from the ledger's rows created from `since` on (migrations 0015 and 0023,
 * on an upgraded store): the same sums as addRollups, in one INSERT ... SELECT ... GROUP BY, with
 * a CASE per histogram bucket. The same SQL on both engines: integer division of a bigint, a cast
 * SQLite reads as INTEGER. `byProject: false` fills the tables as 0015 made them (no project).
 */
export async function backfillRollup(
  db: Kysely<unknown>,
  period: RollupPeriod,
  since: number,
  { byProject = true } = {},
): Promise<void> {
  const { table, column, periodMs } = ROLLUPS[period];
  const start = sql`cast(created_at / ${sql.lit(periodMs)} as bigint) * ${sql.lit(periodMs)}`;
  const project = sql`coalesce(project_id, ${sql.lit(NO_PROJECT)})`;
  const keys = byProject ? [column, 'project_id', 'provider', 'model'] : [column, 'provider', 'model'];
  const columns = [...keys, ...SUMMED].map((c) => sql.ref(c));
  const bucketCounts = (field: string) =>
    HISTOGRAM_COLUMNS.map((i) => sql`sum(case when ${bucketTest(sql.ref(field), i)} then 1 else 0 end)`);
  await sql`
    insert into ${sql.table(table)} (${sql.join(columns)})
    select ${sql.join([
      start,
      ...(byProject ? [project] : []),
      sql.ref('provider'),
      sql.ref('model'),
      sql`count(*)`,
      sql`sum(case when outcome in (${sql.join([...FAILED].map((o) => sql.lit(o)))}) then 1 else 0 end)`,
      sql`sum(input_tokens)`,
      sql`sum(output_tokens)`,
      sql`sum(cost_usd)`,
      ...bucketCounts('ttft_ms'),
      ...bucketCounts('latency_ms'),
    ])}
    from ledger
    where created_at >= ${since}
    group by ${sql.join([start, ...(byProject ? [project] : []), sql.ref('provider'), sql.ref('model')])}
  `.execute(db);
}

/**
 * Creates the minute rollups across projects (migration 0032): ledger_minutes_all, the series
 * columns per minute and provider/model, and ledger_minute_histograms, the histogram columns per
 * minute. Each primary key starts with the minute: a day of charts is a range of it.
 */
export async function createMinutesAcrossProjects(db: Kysely<unknown>): Promise<void> {
  for (const { table, keys, summed } of [TARGETS.minutesAll, TARGETS.minuteHistograms]) {
    let create: CreateTableBuilder<string, string> = db.schema.createTable(table);
    for (const k of keys) create = create.addColumn(k, k === 'minute' ? 'bigint' : 'text', (c) => c.notNull());
    for (const c of summed) create = create.addColumn(c, c === 'cost_usd' ? 'double precision' : 'bigint', (b) => b.notNull());
    await create.addPrimaryKeyConstraint(`${table}_pk`, [...keys]).execute();
  }
}

/** Drops what createMinutesAcrossProjects made. */
export async function dropMinutesAcrossProjects(db: Kysely<unknown>): Promise<void> {
  for (const { table } of [MINUTES_ACROSS_PROJECTS, MINUTE_HISTOGRAMS]) await db.schema.dropTable(table).execute();
}

/**
 * Fills the minute rollups across projects from ledger_minutes, its cells summed over their
 * projects, and over their models for the histograms (migration 0032 on an upgraded store, and
 * the ledger bench after its backfill): the same sums the batches add.
 */
export async function fillMinutesAcrossProjects(db: Kysely<unknown>): Promise<void> {
  for (const { table, keys, summed } of [TARGETS.minutesAll, TARGETS.minuteHistograms]) {
    const refs = keys.map((k) => sql.ref(k));
    await sql`
      insert into ${sql.table(table)} (${sql.join([...refs, ...summed.map((c) => sql.ref(c))])})
      select ${sql.join([...refs, ...summed.map((c) => sql`sum(${sql.ref(c)})`)])}
      from ${sql.table(ROLLUPS.minutes.table)}
      group by ${sql.join(refs)}
    `.execute(db);
  }
}

/** Whether `ms` falls in bucket i (bucketOf's rule: the first bound it does not exceed); false for null. */
function bucketTest(ms: RawBuilder<unknown>, i: number): RawBuilder<unknown> {
  const upper = BUCKET_BOUNDS_MS[i];
  const lower = BUCKET_BOUNDS_MS[i - 1];
  if (lower === undefined) return sql`${ms} <= ${sql.lit(upper)}`;
  if (upper === undefined) return sql`${ms} > ${sql.lit(lower)}`;
  return sql`${ms} > ${sql.lit(lower)} and ${ms} <= ${sql.lit(upper)}`;
}

/** Each column's value in a cell, but the period's (its start). */
const VALUE_OF: Record<string, (c: RollupCell) => number | string> = {
  project_id: (c) => c.projectId,
  provider: (c) => c.provider,
  model: (c) => c.model,
  requests: (c) => c.requests,
  errors: (c) => c.errors,
  input_tokens: (c) => c.inputTokens,
  output_tokens: (c) => c.outputTokens,
  cost_usd: (c) => c.costUsd,
  ...Object.fromEntries(
    HISTOGRAM_COLUMNS.flatMap((i) => [
      [ttftColumn(i), (c: RollupCell) => c.ttft[i]],
      [latencyColumn(i), (c: RollupCell) => c.latency[i]],
    ]),
  ),
};

/** A cell's values for a target's columns, in their order: its key (the period's start first), then its sums. */
function valuesOf(c: RollupCell, keys: readonly string[], summed: readonly string[]): (number | string)[] {
  return [c.start, ...keys.slice(1).map((k) => VALUE_OF[k](c)), ...summed.map((k) => VALUE_OF[k](c))];
}

function cellOf(column: string, row: RollupRow): RollupCell {
  const n = (name: string) => Number(row[name]);
  return {
    start: n(column),
    projectId: String(row.project_id),
    provider: String(row.provider),
    model: String(row.model),
    requests: n('requests'),
    errors: n('errors'),
    inputTokens: n('input_tokens'),
    outputTokens: n('output_tokens'),
    costUsd: n('cost_usd'),
    ttft: HISTOGRAM_COLUMNS.map((i) => n(ttftColumn(i))),
    latency: HISTOGRAM_COLUMNS.map((i) => n(latencyColumn(i))),
  };
}

import { CompiledQuery, type Kysely, type RawBuilder, sql } from 'kysely';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { Database } from './database.ts';
import { engineOf } from './engine-of.ts';
import {
  acrossProjects,
  BUCKET_BOUNDS_MS,
  emptyHistogram,
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
 * The per-minute rollup across projects (migration 0032): ledger_minutes' cells summed over their
 * projects, written in the same batch. An owner's or admin's day of charts read ledger_minutes'
 * ~111k cells a day (100 projects, 12 models) and summed them by minute: 250 ms at 10 M rows
 * (docs/benchmarks/ledger.md); this holds a day in 17k. A member's charts keep the per-project table.
 */
export const MINUTES_ACROSS_PROJECTS = { table: 'ledger_minutes_all', column: 'minute' } as const;

/** Where a batch's cells go: a rollup table, the column of its period, and whether the project is in its key. */
interface RollupTarget {
  table: string;
  column: string;
  byProject: boolean;
}
const TARGETS = {
  minutes: { ...ROLLUPS.minutes, byProject: true },
  hours: { ...ROLLUPS.hours, byProject: true },
  minutesAll: { ...MINUTES_ACROSS_PROJECTS, byProject: false },
} as const satisfies Record<string, RollupTarget>;
type TargetName = keyof typeof TARGETS;

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
/** The columns a period's row sums (every one but its key). */
export const SUMMED = [
  'requests',
  'errors',
  'input_tokens',
  'output_tokens',
  'cost_usd',
  ...HISTOGRAM_COLUMNS.map(ttftColumn),
  ...HISTOGRAM_COLUMNS.map(latencyColumn),
];

/** Cells per upsert: 37 values a row, well under both engines' bound-parameter limits. */
const UPSERT_CHUNK = 100;

type RollupRow = Record<string, number | string>;
type RollupDatabase = Record<string, RollupRow>;
/** What the upsert text is compiled from (its values are never sent). */
const EMPTY_CELL: RollupCell = {
  start: 0,
  projectId: NO_PROJECT,
  provider: '',
  model: '',
  requests: 0,
  errors: 0,
  inputTokens: 0,
  outputTokens: 0,
  costUsd: 0,
  ttft: emptyHistogram(),
  latency: emptyHistogram(),
};

/**
 * Adds stored records to the three tables, inside the caller's transaction (the batch's). Records
 * whose minute is past MINUTES_KEPT_MS (replayed from a journal after a long stop) go to the
 * hours only: their minute row would be pruned anyway. The minutes across projects are the
 * per-project minutes summed (acrossProjects), so both grains hold the same sums.
 */
export async function addRollups(trx: Kysely<Database>, stored: readonly LedgerRecord[], now: number): Promise<void> {
  if (stored.length === 0) return;
  const minutes = summarize(stored, ROLLUPS.minutes.periodMs).filter((c) => c.start >= now - MINUTES_KEPT_MS);
  await upsert(trx, 'minutes', minutes);
  await upsert(trx, 'minutesAll', acrossProjects(minutes));
  await upsert(trx, 'hours', summarize(stored, ROLLUPS.hours.periodMs));
}

async function upsert(trx: Kysely<Database>, target: TargetName, cells: readonly RollupCell[]): Promise<void> {
  const { column, byProject } = TARGETS[target];
  for (let i = 0; i < cells.length; i += UPSERT_CHUNK) {
    const chunk = cells.slice(i, i + UPSERT_CHUNK);
    const params = chunk.flatMap((c) => Object.values(rowOf(column, c, byProject)));
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
    const { table, column, byProject } = TARGETS[target];
    const placeholder = Object.fromEntries(Object.keys(rowOf(column, EMPTY_CELL, byProject)).map((c) => [c, 0]));
    const update = Object.fromEntries(
      SUMMED.map((c) => [c, sql<number>`${sql.ref(`${table}.${c}`)} + ${sql.ref(`excluded.${c}`)}`]),
    );
    const { sql: compiled, parameters } = (trx as unknown as Kysely<RollupDatabase>)
      .insertInto(table)
      .values(Array.from({ length: count }, () => placeholder))
      .onConflict((oc) =>
        oc.columns(byProject ? [column, 'project_id', 'provider', 'model'] : [column, 'provider', 'model']).doUpdateSet(update),
      )
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
  // Every project's minutes: the cells already summed over projects (a sixth as many at 10 M rows),
  // one per minute and provider/model, so the series are its rows as they are: summing them anew
  // (as numeric, per group of one) was most of the series query's time.
  const acrossProjects = period === 'minutes' && !projects;
  const { table, column } = acrossProjects ? MINUTES_ACROSS_PROJECTS : ROLLUPS[period];
  const start = sql.ref(column);
  const where = projects ? sql`${start} >= ${since} and project_id in (${sql.join(projects)})` : sql`${start} >= ${since}`;
  const sum = (c: string) => (acrossProjects ? sql.ref(c) : sql`sum(${sql.ref(c)})`);
  const sumHistogram = (c: string) => sql`sum(${sql.ref(c)})`;
  const [series, histograms] = await Promise.all([
    sql<Record<string, number | string>>`
      select ${start} as start, provider, model, ${sum('requests')} as requests, ${sum('errors')} as errors,
        ${sum('input_tokens')} + ${sum('output_tokens')} as tokens, ${sum('cost_usd')} as cost_usd
      from ${sql.table(table)} where ${where} ${acrossProjects ? sql`` : sql`group by ${start}, provider, model`}`.execute(db),
    sql<Record<string, number | string>>`
      select ${start} as start, ${sql.join([...HISTOGRAM_COLUMNS.map(ttftColumn), ...HISTOGRAM_COLUMNS.map(latencyColumn)].map((c) => sql`${sumHistogram(c)} as ${sql.ref(c)}`))}
      from ${sql.table(table)} where ${where} group by ${start}`.execute(db),
  ]);
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
      ttft: HISTOGRAM_COLUMNS.map((i) => Number(row[ttftColumn(i)])),
      latency: HISTOGRAM_COLUMNS.map((i) => Number(row[latencyColumn(i)])),
    })),
  };
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

/** Creates ledger_minutes_all (migration 0032): ledger_minutes' columns without the project. */
export async function createMinutesAcrossProjects(db: Kysely<unknown>): Promise<void> {
  const { table, column } = MINUTES_ACROSS_PROJECTS;
  let create = db.schema
    .createTable(table)
    .addColumn(column, 'bigint', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull());
  for (const c of SUMMED) create = create.addColumn(c, c === 'cost_usd' ? 'double precision' : 'bigint', (b) => b.notNull());
  await create.addPrimaryKeyConstraint(`${table}_pk`, [column, 'provider', 'model']).execute();
}

/**
 * Fills the minute rollup across projects from ledger_minutes, its cells summed over their
 * projects (migration 0032 on an upgraded store, and the ledger bench after its backfill): the
 * same sums the batches add.
 */
export async function fillMinutesAcrossProjects(db: Kysely<unknown>): Promise<void> {
  const { table, column } = MINUTES_ACROSS_PROJECTS;
  const keys = [sql.ref(column), sql.ref('provider'), sql.ref('model')];
  await sql`
    insert into ${sql.table(table)} (${sql.join([...keys, ...SUMMED.map((c) => sql.ref(c))])})
    select ${sql.join([...keys, ...SUMMED.map((c) => sql`sum(${sql.ref(c)})`)])}
    from ${sql.table(ROLLUPS.minutes.table)}
    group by ${sql.join(keys)}
  `.execute(db);
}

/** Whether `ms` falls in bucket i (bucketOf's rule: the first bound it does not exceed); false for null. */
function bucketTest(ms: RawBuilder<unknown>, i: number): RawBuilder<unknown> {
  const upper = BUCKET_BOUNDS_MS[i];
  const lower = BUCKET_BOUNDS_MS[i - 1];
  if (lower === undefined) return sql`${ms} <= ${sql.lit(upper)}`;
  if (upper === undefined) return sql`${ms} > ${sql.lit(lower)}`;
  return sql`${ms} > ${sql.lit(lower)} and ${ms} <= ${sql.lit(upper)}`;
}

function rowOf(column: string, c: RollupCell, byProject: boolean): RollupRow {
  const row: RollupRow = {
    [column]: c.start,
    ...(byProject ? { project_id: c.projectId } : {}),
    provider: c.provider,
    model: c.model,
    requests: c.requests,
    errors: c.errors,
    input_tokens: c.inputTokens,
    output_tokens: c.outputTokens,
    cost_usd: c.costUsd,
  };
  for (const i of HISTOGRAM_COLUMNS) {
    row[ttftColumn(i)] = c.ttft[i];
    row[latencyColumn(i)] = c.latency[i];
  }
  return row;
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

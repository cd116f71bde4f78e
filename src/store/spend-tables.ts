import { CompiledQuery, type Kysely, sql } from 'kysely';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { Database } from './database.ts';
import { engineOf } from './engine-of.ts';
import { FAILED } from './rollup-cells.ts';
import { acrossKeys, noSpend, type SpendCell, summarizeSpend } from './spend-cells.ts';

/**
 * The spend report's rollups of the ledger (migration 0018), per hour and per day (UTC), per
 * project, key and provider/model: `spend_hours` and `spend_days` count each request once, per
 * provider key too (migration 0028: the label of providers.<name>.api_keys, '' without a pool);
 * `spend_tag_hours` and `spend_tag_days` count it once in each of its tags (an untagged one in
 * tag ''), so group-by-tag reads them and every total reads the untagged ones. Written in each
 * ledger batch's transaction from the rows it stored, as the console's rollups are
 * (rollup-tables.ts); kept as long as the ledger (a day's rows are a 24th of its hours').
 */
export const SPEND_ROLLUPS = {
  hours: { table: 'spend_hours', tagTable: 'spend_tag_hours', periodMs: 3_600_000 },
  days: { table: 'spend_days', tagTable: 'spend_tag_days', periodMs: 86_400_000 },
} as const;
export type SpendPeriod = keyof typeof SPEND_ROLLUPS;

/**
 * The spend rollup per day, project and provider/model (migration 0031): spend_days' cells summed
 * over their keys and provider keys, written in the same batch. The report by day or month that
 * neither filters nor groups by key or provider key reads it: a month by project summed
 * spend_days' 735k cells (2,000 keys, 12 models) in ~220 ms at 10 M rows, here ~36k
 * (docs/benchmarks/ledger.md). Tags, keys and provider keys keep the other tables.
 */
export const SPEND_PROJECT_DAYS = { table: 'spend_project_days' } as const;
const PROJECT_DIMENSIONS = ['period_start', 'project_id', 'provider', 'model'];

/** What a table's cells are kept apart by: every dimension and the provider key, every dimension and the tag, or the project and model only. */
type SpendGrain = 'untagged' | 'tagged' | 'project';

export const SPEND_DIMENSIONS = ['period_start', 'project_id', 'key_id', 'provider', 'model'] as const;
export const SPEND_SUMS = ['requests', 'errors', 'input_tokens', 'cached_input_tokens', 'output_tokens', 'cost_usd'] as const;

/**
 * The tables' columns as a migration made them: 0018's (`initial`) had neither the provider key
 * nor the cached tokens; 0024 (`provider_keys`) added both.
 */
type SpendShape = 'initial' | 'provider_keys';

/** Cells per upsert: at most 12 values a row, well under both engines' bound-parameter limits. */
const UPSERT_CHUNK = 200;

type SpendRow = Record<string, number | string>;
type SpendDatabase = Record<string, SpendRow>;

/** Adds stored records to the five tables, inside the caller's transaction (the batch's). */
export async function addSpendRollups(trx: Kysely<Database>, stored: readonly LedgerRecord[]): Promise<void> {
  if (stored.length === 0) return;
  for (const period of ['hours', 'days'] as const) {
    const { table, tagTable, periodMs } = SPEND_ROLLUPS[period];
    const untagged = summarizeSpend(stored, periodMs, false);
    await upsert(trx, table, untagged, 'untagged');
    if (period === 'days') await upsert(trx, SPEND_PROJECT_DAYS.table, acrossKeys(untagged), 'project');
    await upsert(trx, tagTable, summarizeSpend(stored, periodMs, true), 'tagged');
  }
}

async function upsert(trx: Kysely<Database>, table: string, cells: readonly SpendCell[], grain: SpendGrain): Promise<void> {
  for (let i = 0; i < cells.length; i += UPSERT_CHUNK) {
    const chunk = cells.slice(i, i + UPSERT_CHUNK);
    const params = chunk.flatMap((c) => Object.values(rowOf(c, grain)));
    await trx.executeQuery(CompiledQuery.raw(upsertSqlFor(trx, table, grain, chunk.length), params));
  }
}

/** Upsert text per engine, table and row count, compiled once (as the console's rollups' is). */
const upsertSql = new Map<string, string>();

function upsertSqlFor(trx: Kysely<Database>, table: string, grain: SpendGrain, count: number): string {
  const key = `${engineOf(trx)}:${table}:${count}`;
  let text = upsertSql.get(key);
  if (text === undefined) {
    const placeholder = Object.fromEntries(Object.keys(rowOf(EMPTY_CELL, grain)).map((c) => [c, 0]));
    const update = Object.fromEntries(
      SPEND_SUMS.map((c) => [c, sql<number>`${sql.ref(`${table}.${c}`)} + ${sql.ref(`excluded.${c}`)}`]),
    );
    const { sql: compiled, parameters } = (trx as unknown as Kysely<SpendDatabase>)
      .insertInto(table)
      .values(Array.from({ length: count }, () => placeholder))
      .onConflict((oc) =>
        oc.columns(grain === 'project' ? PROJECT_DIMENSIONS : dimensionsOf(grain === 'tagged')).doUpdateSet(update),
      )
      .compile();
    if (parameters.length !== count * Object.keys(placeholder).length)
      throw new Error('spend upsert: every value must be a bound parameter');
    text = compiled;
    upsertSql.set(key, text);
  }
  return text;
}

const EMPTY_CELL: SpendCell = {
  start: 0,
  projectId: '',
  keyId: '',
  provider: '',
  model: '',
  tag: '',
  providerKey: '',
  ...noSpend(),
};

/** A table's primary key: a tag table's has the tag, an untagged one's (since 0024) the provider key. */
export function dimensionsOf(byTag: boolean, shape: SpendShape = 'provider_keys'): string[] {
  if (byTag) return [...SPEND_DIMENSIONS, 'tag'];
  return shape === 'initial' ? [...SPEND_DIMENSIONS] : [...SPEND_DIMENSIONS, 'provider_key'];
}

/** Creates spend_project_days (migration 0031): the untagged tables' columns without the key and the provider key. */
export async function createSpendProjectTable(db: Kysely<unknown>): Promise<void> {
  const { table } = SPEND_PROJECT_DAYS;
  let create = db.schema.createTable(table);
  for (const c of PROJECT_DIMENSIONS) create = create.addColumn(c, c === 'period_start' ? 'bigint' : 'text', (b) => b.notNull());
  for (const c of SPEND_SUMS) create = create.addColumn(c, c === 'cost_usd' ? 'double precision' : 'bigint', (b) => b.notNull());
  await create.addPrimaryKeyConstraint(`${table}_pk`, PROJECT_DIMENSIONS as never).execute();
}

/**
 * Fills spend_project_days from spend_days, its cells summed over keys and provider keys
 * (migration 0031 on an upgraded store, and the ledger bench after its backfill): the same sums
 * the batches add.
 */
export async function fillSpendProjectDays(db: Kysely<unknown>): Promise<void> {
  const keys = PROJECT_DIMENSIONS.map((c) => sql.ref(c));
  await sql`
    insert into ${sql.table(SPEND_PROJECT_DAYS.table)} (${sql.join([...keys, ...SPEND_SUMS.map((c) => sql.ref(c))])})
    select ${sql.join([...keys, ...SPEND_SUMS.map((c) => sql`sum(${sql.ref(c)})`)])}
    from ${sql.table(SPEND_ROLLUPS.days.table)}
    group by ${sql.join(keys)}
  `.execute(db);
}

/** Creates one of the four tables in a migration's shape. */
export async function createSpendTable(db: Kysely<unknown>, name: string, byTag: boolean, shape: SpendShape): Promise<void> {
  let create = db.schema
    .createTable(name)
    .addColumn('period_start', 'bigint', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull());
  if (byTag) create = create.addColumn('tag', 'text', (c) => c.notNull());
  else if (shape === 'provider_keys') create = create.addColumn('provider_key', 'text', (c) => c.notNull());
  create = create
    .addColumn('requests', 'bigint', (c) => c.notNull())
    .addColumn('errors', 'bigint', (c) => c.notNull())
    .addColumn('input_tokens', 'bigint', (c) => c.notNull());
  if (shape === 'provider_keys') create = create.addColumn('cached_input_tokens', 'bigint', (c) => c.notNull().defaultTo(0));
  await create
    .addColumn('output_tokens', 'bigint', (c) => c.notNull())
    .addColumn('cost_usd', 'double precision', (c) => c.notNull())
    .addPrimaryKeyConstraint(`${name}_pk`, dimensionsOf(byTag, shape) as never)
    .execute();
}

/** What a read of the rollups is narrowed to. Times are epoch ms: [from, to). */
export interface SpendFilter {
  from: number;
  to: number;
  projectId?: string;
  /** The projects a caller sees when it sees several (a project member): any of them. */
  projectIds?: readonly string[];
  keyId?: string;
  /** `provider/model` or the provider-side model alone. */
  model?: string;
  /** Reads the tag rollup's cells of this tag only. */
  tag?: string;
}

/** What a read of the rollups keeps apart; the others are summed over (GET /v1/spend's group_by). */
export type SpendDimension = 'project' | 'key' | 'model' | 'tag' | 'provider_key';

/**
 * The cells of the periods starting in [from, to): a range read of the primary key, narrowed by
 * the filter, summed by the store over every dimension not in `keep` (read as ''). `byTag` reads
 * the tag rollup (every tag's cells, or the filter's tag's); days that need no key nor provider
 * key read spend_project_days, the same sums in a twentieth of the cells. Summed here, not by the
 * report: the report of a month by project read every (day, project, key, provider/model) cell,
 * which at 10 M ledger rows took 1.8 s at p50 (npm run bench:ledger, docs/benchmarks/ledger.md).
 */
export async function readSpend(
  db: Kysely<Database>,
  period: SpendPeriod,
  byTag: boolean,
  f: SpendFilter,
  keep: readonly SpendDimension[],
): Promise<SpendCell[]> {
  const { table, tagTable } = SPEND_ROLLUPS[period];
  const kept = new Set(keep);
  const byProject = period === 'days' && !byTag && f.keyId === undefined && !kept.has('key') && !kept.has('provider_key');
  const dimensions: [column: string, kept: boolean][] = [
    ['project_id', kept.has('project')],
    ['key_id', kept.has('key')],
    ['provider', kept.has('model') || kept.has('provider_key')],
    ['model', kept.has('model')],
    byTag ? ['tag', kept.has('tag')] : ['provider_key', kept.has('provider_key')],
  ];
  let query = (db as unknown as Kysely<SpendDatabase>)
    .selectFrom(byProject ? SPEND_PROJECT_DAYS.table : byTag ? tagTable : table)
    .select([
      sql.ref<number>('period_start').as('period_start'),
      ...dimensions.map(([column, isKept]) => (isKept ? sql.ref<string>(column) : sql<string>`''`).as(column)),
      ...SPEND_SUMS.map((column) => sql<number>`sum(${sql.ref(column)})`.as(column)),
    ])
    .where('period_start', '>=', f.from)
    .where('period_start', '<', f.to)
    .groupBy([sql.ref('period_start'), ...dimensions.filter(([, isKept]) => isKept).map(([column]) => sql.ref(column))]);
  if (f.projectId !== undefined) query = query.where('project_id', '=', f.projectId);
  if (f.projectIds !== undefined) query = query.where('project_id', 'in', f.projectIds.length > 0 ? f.projectIds : ['']);
  if (f.keyId !== undefined) query = query.where('key_id', '=', f.keyId);
  if (f.tag !== undefined && byTag) query = query.where('tag', '=', f.tag);
  const model = f.model;
  if (model !== undefined) {
    const slash = model.indexOf('/');
    query = query.where((eb) =>
      slash > 0
        ? eb.or([
            eb('model', '=', model),
            eb.and([eb('provider', '=', model.slice(0, slash)), eb('model', '=', model.slice(slash + 1))]),
          ])
        : eb('model', '=', model),
    );
  }
  const rows = await query.execute();
  return rows.map((row) => cellOf(row as SpendRow, byTag));
}

/**
 * Fills the tables from the ledger in a migration's shape, the same sums as addSpendRollups with
 * every row untagged (the ledger had no tags when 0018 filled them): all four, or the untagged
 * two (0024 refills those alone, the tag tables keep their rows).
 */
export async function backfillSpend(db: Kysely<unknown>, shape: SpendShape, tables: 'all' | 'untagged' = 'all'): Promise<void> {
  const keyed = shape === 'provider_keys';
  for (const period of ['hours', 'days'] as const) {
    const { table, tagTable, periodMs } = SPEND_ROLLUPS[period];
    const start = sql`cast(created_at / ${sql.lit(periodMs)} as bigint) * ${sql.lit(periodMs)}`;
    const sums = [
      sql`count(*)`,
      sql`sum(case when outcome in (${sql.join([...FAILED].map((o) => sql.lit(o)))}) then 1 else 0 end)`,
      sql`sum(input_tokens)`,
      ...(keyed ? [sql`sum(cached_input_tokens)`] : []),
      sql`sum(output_tokens)`,
      sql`sum(cost_usd)`,
    ];
    const sumColumns = keyed ? SPEND_SUMS : SPEND_SUMS.filter((c) => c !== 'cached_input_tokens');
    for (const byTag of tables === 'all' ? [false, true] : [false]) {
      const columns = [...dimensionsOf(byTag, shape), ...sumColumns].map((c) => sql.ref(c));
      const providerKey = !byTag && keyed ? [sql`coalesce(provider_key, '')`] : [];
      const tag = byTag ? [sql.lit('')] : [];
      const groups = [
        start,
        sql`coalesce(project_id, '')`,
        sql`coalesce(key_id, '')`,
        sql.ref('provider'),
        sql.ref('model'),
        ...providerKey,
      ];
      await sql`
        insert into ${sql.table(byTag ? tagTable : table)} (${sql.join(columns)})
        select ${sql.join([...groups, ...tag, ...sums])}
        from ledger
        group by ${sql.join(groups)}
      `.execute(db);
    }
  }
}

function rowOf(c: SpendCell, grain: SpendGrain): SpendRow {
  return {
    period_start: c.start,
    project_id: c.projectId,
    ...(grain === 'project' ? {} : { key_id: c.keyId }),
    provider: c.provider,
    model: c.model,
    ...(grain === 'tagged' ? { tag: c.tag ?? '' } : grain === 'untagged' ? { provider_key: c.providerKey ?? '' } : {}),
    requests: c.requests,
    errors: c.errors,
    input_tokens: c.inputTokens,
    cached_input_tokens: c.cachedInputTokens,
    output_tokens: c.outputTokens,
    cost_usd: c.costUsd,
  };
}

function cellOf(row: SpendRow, byTag: boolean): SpendCell {
  const n = (name: string) => Number(row[name]);
  return {
    start: n('period_start'),
    projectId: String(row.project_id),
    keyId: String(row.key_id),
    provider: String(row.provider),
    model: String(row.model),
    ...(byTag ? { tag: String(row.tag) } : { providerKey: String(row.provider_key) }),
    requests: n('requests'),
    errors: n('errors'),
    inputTokens: n('input_tokens'),
    cachedInputTokens: n('cached_input_tokens'),
    outputTokens: n('output_tokens'),
    costUsd: n('cost_usd'),
  };
}

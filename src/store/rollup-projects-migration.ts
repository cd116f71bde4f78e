import { type Kysely, sql } from 'kysely';
import { NO_PROJECT } from './rollup-cells.ts';
import { backfillRollup, MINUTES_KEPT_MS, ROLLUPS, type RollupPeriod, SUMMED } from './rollup-tables.ts';

/**
 * Migration 0023: the project becomes a dimension of ledger_minutes and ledger_hours (the second
 * column of their primary key), so a project member's charts read its projects' rows and never
 * the ledger. Neither engine can change a primary key in place (SQLite cannot at all), so each
 * table is made anew beside the old one, filled, and the old one dropped, in the migration's
 * transaction.
 *
 * The ledger is the truth from its first whole period on (and, per minute, from the oldest minute
 * kept): those periods are summed from it per project. Earlier periods keep their old rows, as of
 * no project: their ledger rows may be gone (ledger.retention), and the owner's charts still
 * count them; a member's charts start at the upgrade's oldest ledger row.
 */
export async function rollupProjectsUp(db: Kysely<unknown>): Promise<void> {
  const oldest = await oldestLedgerRow(db);
  const now = Date.now();
  for (const period of ['minutes', 'hours'] as const) {
    const { table, column, periodMs } = ROLLUPS[period];
    const previous = `${table}_0015`;
    await sql`alter table ${sql.table(table)} rename to ${sql.table(previous)}`.execute(db);
    await createRollupTable(db, period, true);
    const kept = period === 'minutes' ? Math.floor((now - MINUTES_KEPT_MS) / periodMs) * periodMs : 0;
    const from = oldest === undefined ? undefined : Math.max(Math.ceil(oldest / periodMs) * periodMs, kept);
    const sums = SUMMED.map((c) => sql.ref(c));
    await sql`
      insert into ${sql.table(table)} (${sql.join([sql.ref(column), sql.ref('project_id'), sql.ref('provider'), sql.ref('model'), ...sums])})
      select ${sql.join([sql.ref(column), sql.lit(NO_PROJECT), sql.ref('provider'), sql.ref('model'), ...sums])}
      from ${sql.table(previous)}
      ${from === undefined ? sql`` : sql`where ${sql.ref(column)} < ${from}`}
    `.execute(db);
    if (from !== undefined) await backfillRollup(db, period, from);
    await db.schema.dropTable(previous).execute();
  }
}

/** Back to 0015's tables: each period's rows summed over their projects. */
export async function rollupProjectsDown(db: Kysely<unknown>): Promise<void> {
  for (const period of ['minutes', 'hours'] as const) {
    const { table, column } = ROLLUPS[period];
    const previous = `${table}_0023`;
    await sql`alter table ${sql.table(table)} rename to ${sql.table(previous)}`.execute(db);
    await createRollupTable(db, period, false);
    const keys = [sql.ref(column), sql.ref('provider'), sql.ref('model')];
    await sql`
      insert into ${sql.table(table)} (${sql.join([...keys, ...SUMMED.map((c) => sql.ref(c))])})
      select ${sql.join([...keys, ...SUMMED.map((c) => sql`sum(${sql.ref(c)})`)])}
      from ${sql.table(previous)}
      group by ${sql.join(keys)}
    `.execute(db);
    await db.schema.dropTable(previous).execute();
  }
}

/** The table as 0012/0015 made it, or with the project after the period (a new key's name: the old table still holds its own). */
async function createRollupTable(db: Kysely<unknown>, period: RollupPeriod, byProject: boolean): Promise<void> {
  const { table, column }: { table: string; column: string } = ROLLUPS[period];
  let create = db.schema.createTable(table).addColumn(column, 'bigint', (c) => c.notNull());
  if (byProject) create = create.addColumn('project_id', 'text', (c) => c.notNull());
  create = create.addColumn('provider', 'text', (c) => c.notNull()).addColumn('model', 'text', (c) => c.notNull());
  for (const c of SUMMED) create = create.addColumn(c, c === 'cost_usd' ? 'double precision' : 'bigint', (b) => b.notNull());
  const key: string[] = byProject ? [column, 'project_id', 'provider', 'model'] : [column, 'provider', 'model'];
  await create.addPrimaryKeyConstraint(byProject ? `${table}_by_project_pk` : `${table}_pk`, key).execute();
}

async function oldestLedgerRow(db: Kysely<unknown>): Promise<number | undefined> {
  const { rows } = await sql<{ oldest: number | string | null }>`select min(created_at) as oldest from ledger`.execute(db);
  const oldest = rows[0]?.oldest;
  return oldest === null || oldest === undefined ? undefined : Number(oldest);
}

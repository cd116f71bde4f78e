import { type Kysely, sql } from 'kysely';
import type { Database } from './database.ts';
import { SLUICE_TABLES } from './migrations.ts';
import { UnusableStoreError } from './unusable-store-error.ts';

/** Kysely's Migrator records the migrations it ran here (its default table name). */
const MIGRATION_TABLE = 'kysely_migration';

/**
 * Refuses sluice's tables without the record of the migrations that made them: a backup or a
 * copy that left `kysely_migration` out, or that table dropped or emptied by hand. The Migrator
 * then runs every migration again and fails on the first table that exists (`relation "ledger"
 * already exists`, SQLSTATE class 42, which the store's retry took for an outage: retried
 * forever); migrateStore asks this after such a failure. Adopting the tables is not safe: 0003 and 0014 add only indexes and 0015 rebuilds
 * the rollups, so the version of a schema cannot be told from its tables and columns, and a
 * wrong guess skips a migration on a live ledger. `where` names the store in the message.
 */
export async function refuseUnrecordedSchema(db: Kysely<Database>, schema: string | undefined, where: string): Promise<void> {
  const tables = await tablesOf(db, schema);
  const ours = SLUICE_TABLES.filter((t) => tables.has(t));
  if (ours.length === 0) return; // a new store: the Migrator creates everything
  if (tables.has(MIGRATION_TABLE) && (await migrationsRecorded(db, schema)) > 0) return;
  const named = ours.length > 3 ? `${ours.slice(0, 3).join(', ')} and ${ours.length - 3} more` : ours.join(', ');
  throw new UnusableStoreError(
    `${where} holds sluice's tables (${named}) but no record of the migrations that made them ` +
      `(its ${MIGRATION_TABLE} table is missing or empty), and sluice will not guess the version of a ledger. ` +
      `Restore ${MIGRATION_TABLE} and kysely_migration_lock from the backup or copy the tables came from, ` +
      'or point the store at an empty database or schema (sluice creates its tables there), ' +
      "or, if their rows may go, drop sluice's tables.",
  );
}

async function tablesOf(db: Kysely<Database>, schema: string | undefined): Promise<Set<string>> {
  const query =
    schema === undefined
      ? sql<{ name: string }>`select name from sqlite_master where type = 'table'`
      : sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = ${schema}`;
  const { rows } = await query.execute(db);
  return new Set(rows.map((r) => r.name));
}

async function migrationsRecorded(db: Kysely<Database>, schema: string | undefined): Promise<number> {
  const table = schema === undefined ? sql.table(MIGRATION_TABLE) : sql.id(schema, MIGRATION_TABLE);
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${table}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

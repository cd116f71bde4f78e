import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, sql } from 'kysely';
import { type MigrationResultSet, Migrator } from 'kysely/migration';
import type { Database } from './database.ts';
import { migrationProvider } from './migrations.ts';
import { sqliteHere } from './sqlite-here.ts';
import type { OpenedDatabase, StoreLocation } from './store-location.ts';
import { SqliteThreadDialect } from './sqlite-thread-dialect.ts';
import { refuseUnrecordedSchema } from './unrecorded-schema.ts';
import { UnusableStoreError } from './unusable-store-error.ts';

export async function openDatabase(location: StoreLocation): Promise<OpenedDatabase> {
  if (location.databaseUrl) {
    // pg is loaded by the deployments that use it: one on SQLite (the default) never holds it.
    const { openPostgres } = await import('./open-postgres.ts');
    // Migrations run on their own connection, with their own (longer) query timeout.
    const migrating = openPostgres(location, 'migrations');
    try {
      await migrateStore(migrating);
    } finally {
      await migrating.close();
    }
    return openPostgres(location, 'queries');
  }
  // On a thread of its own: node:sqlite is synchronous (sqlite-thread-dialect.ts). The thread
  // starts on the first query; a file is migrated before that, on this thread (sqlite-here.ts).
  const db = new Kysely<Database>({
    dialect: new SqliteThreadDialect(location.path, { started: location.sqliteThreadStarted }),
  });
  const opened: OpenedDatabase = { db, engine: 'sqlite', close: () => db.destroy() };
  if (location.path === ':memory:') {
    // A throwaway database lives in its thread: it is migrated there.
    await migrateStore(opened).catch(async (err: unknown) => {
      await db.destroy();
      throw err;
    });
    return opened;
  }
  mkdirSync(dirname(location.path), { recursive: true });
  const here = sqliteHere(location.path);
  try {
    await migrateStore(
      { db: here, engine: 'sqlite', close: () => here.destroy() },
      undefined,
      `The SQLite file ${location.path}`,
    );
  } finally {
    await here.destroy();
  }
  return opened;
}

/**
 * Migrates to `target` (default: the latest), in sluice's own schema on PostgreSQL. A failure
 * that comes from sluice's tables being there without the record of their migrations is an
 * UnusableStoreError naming `where` and the way out (unrecorded-schema.ts); others are thrown as they are.
 */
export async function migrateStore(opened: OpenedDatabase, target?: string, where?: string): Promise<MigrationResultSet> {
  const schema = opened.engine === 'postgres' ? await currentSchema(opened.db) : undefined;
  const migrate = (db: Kysely<Database>) => {
    const migrator = new Migrator({ db, provider: migrationProvider, migrationTableSchema: schema });
    return target ? migrator.migrateTo(target) : migrator.migrateToLatest();
  };
  const result = await (opened.engine === 'postgres' ? migrateInTransaction(opened.db, migrate) : migrate(opened.db));
  if (!result.error) return result;
  // Looked for after a failure only: on SQLite (no migration lock) another process migrating
  // the same new file at this moment shows its tables before their record for an instant.
  await refuseUnrecordedSchema(opened.db, schema, where ?? (schema ? `PostgreSQL schema "${schema}"` : 'The SQLite store')).catch(
    (err: unknown) => {
      if (err instanceof UnusableStoreError) throw err;
    },
  );
  throw result.error;
}

/** Thrown to roll a failed migration run back; carries its result. */
class RolledBack extends Error {
  readonly result: MigrationResultSet;
  constructor(result: MigrationResultSet) {
    super('migration failed');
    this.result = result;
  }
}

/**
 * PostgreSQL: the whole run in one transaction, which first takes the migration lock at
 * transaction level (open-postgres.ts says why not Kysely's session lock): instances starting
 * together wait for it, and find the migrations done. Taken before the migrator looks for its
 * own tables, so no two instances create those at once either.
 */
async function migrateInTransaction(
  db: Kysely<Database>,
  migrate: (db: Kysely<Database>) => Promise<MigrationResultSet>,
): Promise<MigrationResultSet> {
  try {
    return await db.transaction().execute(async (trx) => {
      await trx.getExecutor().adapter.acquireMigrationLock(trx, { lockTable: '', lockRowId: '' });
      const result = await migrate(trx);
      if (result.error) throw new RolledBack(result);
      return result;
    });
  } catch (err) {
    if (err instanceof RolledBack) return err.result;
    throw err;
  }
}

/**
 * The schema sluice's tables go to (the first of search_path). Kysely's Migrator, told no schema,
 * takes a `kysely_migration` table in ANY schema as its own, so another Kysely app sharing the
 * database (or a parallel test run in its own schema) made it skip creating sluice's and fail.
 */
async function currentSchema(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error('PostgreSQL: no schema of the search_path exists to hold the ledger');
  return schema;
}

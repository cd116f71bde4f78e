import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import type { Database } from './database.ts';
import { migrationProvider } from './migrations.ts';
import { openNodeSqlite } from './node-sqlite-database.ts';

export interface StoreLocation {
  /** PostgreSQL for deployments with many instances. */
  databaseUrl?: string;
  /** The embedded SQLite file (`:memory:` for a throwaway one). */
  path: string;
}

export interface OpenedDatabase {
  db: Kysely<Database>;
  engine: 'postgres' | 'sqlite';
}

/** int8 (bigint) columns come back from pg as strings; every bigint here is a count or a time. */
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

export async function openDatabase(location: StoreLocation): Promise<OpenedDatabase> {
  let opened: OpenedDatabase;
  if (location.databaseUrl) {
    const pool = new pg.Pool({ connectionString: location.databaseUrl, max: 4, types: pgTypes as pg.CustomTypesConfig });
    // An idle client losing its connection (a database restart) must not crash the gateway.
    pool.on('error', () => {});
    // Nor may a checked-out one: pg-pool removes its idle listener while a client is in use, so a
    // connection cut mid-query would be an unhandled 'error' event. The query itself still fails
    // (the ledger writer retries it) and the pool discards the dead client on release.
    pool.on('connect', (client) => client.on('error', () => {}));
    opened = { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), engine: 'postgres' };
  } else {
    if (location.path !== ':memory:') mkdirSync(dirname(location.path), { recursive: true });
    opened = {
      db: new Kysely<Database>({ dialect: new SqliteDialect({ database: openNodeSqlite(location.path) }) }),
      engine: 'sqlite',
    };
  }
  try {
    const { error } = await new Migrator({
      db: opened.db,
      provider: migrationProvider,
      migrationTableSchema: opened.engine === 'postgres' ? await currentSchema(opened.db) : undefined,
    }).migrateToLatest();
    if (error) throw error;
  } catch (err) {
    await opened.db.destroy();
    throw err;
  }
  return opened;
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

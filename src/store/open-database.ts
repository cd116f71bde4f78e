import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
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
    opened = { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), engine: 'postgres' };
  } else {
    if (location.path !== ':memory:') mkdirSync(dirname(location.path), { recursive: true });
    opened = {
      db: new Kysely<Database>({ dialect: new SqliteDialect({ database: openNodeSqlite(location.path) }) }),
      engine: 'sqlite',
    };
  }
  const { error } = await new Migrator({ db: opened.db, provider: migrationProvider }).migrateToLatest();
  if (error) {
    await opened.db.destroy();
    throw error;
  }
  return opened;
}

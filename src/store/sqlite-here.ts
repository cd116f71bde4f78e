import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import { Kysely, SqliteDialect, type SqliteDatabase } from 'kysely';
import type { Database } from './database.ts';
import { SQLITE_SETTINGS } from './sqlite-thread-dialect.ts';

/**
 * The SQLite file on this thread, for the migrations at start-up only: nothing is served yet, so
 * a synchronous statement stops nothing, and the SQLite thread (sqlite-thread-dialect.ts) starts
 * on the store's first query instead of at start. An idle gateway never pays for it: its isolate
 * is ~13-16 MiB of RSS (an idle `sluice serve` with the store off measures 108 MiB against 124).
 * The settings are the thread's (SQLITE_SETTINGS), which owns the file from then on.
 */
export function sqliteHere(path: string): Kysely<Database> {
  const db = new DatabaseSync(path);
  db.exec(SQLITE_SETTINGS);
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: kyselyShape(db) }) });
}

/**
 * node:sqlite's database in the shape Kysely's SqliteDialect takes (better-sqlite3's): a
 * statement's parameters as one array, and whether it returns rows.
 */
function kyselyShape(db: DatabaseSync): SqliteDatabase {
  return {
    close: () => db.close(),
    prepare(sql) {
      const statement = db.prepare(sql);
      const values = (parameters: ReadonlyArray<unknown>) => parameters as SQLInputValue[];
      return {
        reader: statement.columns().length > 0,
        all: (parameters) => statement.all(...values(parameters)),
        run: (parameters) => statement.run(...values(parameters)),
        iterate: (parameters) => statement.iterate(...values(parameters)),
      };
    },
  };
}

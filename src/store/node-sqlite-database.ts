import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/**
 * Kysely's SQLite dialect expects better-sqlite3's shape; node:sqlite (built into Node, no native
 * build, opens in ~3 ms at ~70 MiB) differs in two details, bridged here: statements take
 * parameters as arguments rather than one array, and say whether they return rows through
 * `columns()` rather than `reader`.
 */
export function openNodeSqlite(path: string): SqliteDatabase {
  const db = new DatabaseSync(path);
  // WAL: readers (the request log) never block the ledger writer; NORMAL is durable across
  // process crashes, which is what a gateway needs.
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
  // Kysely prepares every query it runs; the ledger's batch inserts repeat the same few SQL
  // texts, whose compilation (a 500-row VALUES list) cost ~2.5 us per request in `npm run bench`.
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => db.close(),
    prepare: (sql) => {
      let stmt = statements.get(sql);
      if (!stmt) {
        if (statements.size >= 64) statements.clear();
        stmt = wrap(db.prepare(sql));
        statements.set(sql, stmt);
      }
      return stmt;
    },
  };
}

function wrap(stmt: StatementSync): SqliteStatement {
  const reader = stmt.columns().length > 0;
  return {
    reader,
    all: (params) => stmt.all(...(params as SQLInputValue[])),
    run: (params) => stmt.run(...(params as SQLInputValue[])),
    iterate: (params) => stmt.iterate(...(params as SQLInputValue[])) as IterableIterator<unknown>,
  };
}

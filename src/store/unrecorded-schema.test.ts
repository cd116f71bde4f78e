import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { SLUICE_TABLES } from './migrations.ts';
import { openDatabase } from './open-database.ts';
import { UnusableStoreError } from './unusable-store-error.ts';

function withFile(run: (path: string) => Promise<void>) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-unrecorded-'));
    try {
      await run(join(dir, 'sluice.db'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

function exec(path: string, sql: string): void {
  const db = new DatabaseSync(path);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

describe('tables without the record of their migrations', () => {
  it(
    'SLUICE_TABLES lists every table the migrations create',
    withFile(async (path) => {
      await (await openDatabase({ path })).close();
      const db = new DatabaseSync(path, { readOnly: true });
      try {
        const names = db
          .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'kysely_%'`)
          .all()
          .map((r) => r.name as string);
        assert.deepEqual(names.sort(), [...SLUICE_TABLES].sort());
      } finally {
        db.close();
      }
    }),
  );

  it(
    'a half-migrated store (tables present, the migrations table gone) is a clear start-up error naming the state and the fix, not retried forever',
    withFile(async (path) => {
      await (await openDatabase({ path })).close();
      exec(path, 'DROP TABLE kysely_migration; DROP TABLE kysely_migration_lock;');
      await assert.rejects(openDatabase({ path }), (err) => {
        assert.ok(err instanceof UnusableStoreError);
        assert.match(
          err.message,
          new RegExp(`^The SQLite file ${path} holds sluice's tables \\(ledger, responses, rejections and ${SLUICE_TABLES.length - 3} more\\)`),
        );
        assert.match(err.message, /no record of the migrations that made them \(its kysely_migration table is missing or empty\)/);
        assert.match(err.message, /Restore kysely_migration and kysely_migration_lock from the backup/);
        return true;
      });
    }),
  );

  it(
    'the migrations table emptied is the same state; a store with its record, or a new one, opens',
    withFile(async (path) => {
      await (await openDatabase({ path })).close();
      await (await openDatabase({ path })).close();
      exec(path, 'DELETE FROM kysely_migration;');
      await assert.rejects(openDatabase({ path }), UnusableStoreError);
    }),
  );
});

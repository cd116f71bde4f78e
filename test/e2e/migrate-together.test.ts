import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { migrationProvider } from '../../src/store/migrations.ts';
import { openDatabase } from '../../src/store/open-database.ts';
import { adminQuery, createTestSchema, databaseUrl, noPostgres } from '../helpers/postgres.ts';

// A rolling upgrade (docs/operations/kubernetes.md) starts new instances while others run: the
// store's migrations must run once whoever starts first. Kysely's migrator takes a PostgreSQL
// advisory lock and runs the pending migrations in one transaction; the others wait for the lock,
// then find nothing left to run.
describe('instances starting together on PostgreSQL', { skip: noPostgres }, () => {
  it('migrate a fresh schema once: every instance opens, each migration is recorded once', async () => {
    const schema = await createTestSchema();
    try {
      const opened = await Promise.all(Array.from({ length: 4 }, () => openDatabase({ databaseUrl: schema.url, path: ':memory:' })));
      await Promise.all(opened.map((db) => db.close()));
      const { rows } = await adminQuery(databaseUrl ?? '', `SELECT name, count(*)::int AS times FROM ${schema.name}.kysely_migration GROUP BY name`);
      const names = Object.keys(await migrationProvider.getMigrations()).toSorted();
      assert.deepEqual(rows.map((row): string => row.name).toSorted(), names);
      assert.deepEqual(
        rows.filter((row) => row.times !== 1),
        [],
      );
    } finally {
      await schema.drop();
    }
  });
});

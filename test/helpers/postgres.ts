import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Set by CI (.ci/run) to the machine's Postgres; tests that need it skip visibly without it. */
export const databaseUrl = process.env.DATABASE_URL;

export const noPostgres = databaseUrl ? false : 'DATABASE_URL not set: the PostgreSQL run is skipped';

export interface TestSchema {
  /** DATABASE_URL with `search_path` pinned to a schema of this run only. */
  url: string;
  name: string;
  drop: () => Promise<void>;
}

/**
 * A fresh schema per test run: every unqualified table (the ledger and Kysely's migration
 * bookkeeping) lands in it through `options=-c search_path=…`, so reruns and test files running
 * in parallel against the same database never see each other's rows.
 */
export async function createTestSchema(base = databaseUrl): Promise<TestSchema> {
  if (!base) throw new Error('DATABASE_URL is not set');
  const name = `sluice_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await adminQuery(base, `CREATE SCHEMA ${name}`);
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${name}`);
  return {
    url: url.toString(),
    name,
    drop: async () => {
      await adminQuery(base, `DROP SCHEMA IF EXISTS ${name} CASCADE`);
    },
  };
}

/** A one-off query on its own connection (outside the pool under test). */
export async function adminQuery(url: string, text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

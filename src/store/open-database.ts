import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { Kysely, type PostgresPool, type PostgresPoolClient, PostgresDialect, sql } from 'kysely';
import { type MigrationResultSet, Migrator } from 'kysely/migration';
import pg from 'pg';
import { classifyStoreError } from './classify-store-error.ts';
import type { Database } from './database.ts';
import { migrationProvider } from './migrations.ts';
import { sqliteHere } from './sqlite-here.ts';
import { SqliteThreadDialect } from './sqlite-thread-dialect.ts';

export interface StoreLocation {
  /** PostgreSQL for deployments with many instances. */
  databaseUrl?: string;
  /** The embedded SQLite file (`:memory:` for a throwaway one). */
  path: string;
  /** SQLite: each thread the store starts, on its first query (sqlite-thread-dialect.ts). */
  sqliteThreadStarted?: (thread: Worker) => void;
  /** PostgreSQL: give up on a connection attempt after this long (default 5 s). */
  connectTimeoutMs?: number;
  /**
   * PostgreSQL: give up on a query after this long (default 10 s), on both sides: the server
   * cancels it (statement_timeout) and the client stops waiting (query_timeout), which is what
   * ends a query on a half-open connection, where no answer and no error ever comes.
   */
  queryTimeoutMs?: number;
}

export interface OpenedDatabase {
  db: Kysely<Database>;
  engine: 'postgres' | 'sqlite';
  /**
   * Closes the connections, in at most `timeoutMs`: past it, PostgreSQL sockets still open (a
   * half-open connection never answers the goodbye) are destroyed, so a shutdown always ends.
   */
  close: (timeoutMs?: number) => Promise<void>;
}

/** int8 (bigint) columns come back from pg as strings; every bigint here is a count or a time. */
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

/**
 * The pool's settings against a database that stops answering. TCP keep-alive finds a peer that
 * vanished (a NAT or a load balancer dropping the flow) on an idle pooled connection; the
 * connect and query timeouts bound everything else, including a proxy that accepts and then
 * stalls, which keep-alive cannot see (its kernel still answers the probes).
 */
function poolOptions(location: StoreLocation, use: 'queries' | 'migrations'): pg.PoolConfig {
  const queryTimeoutMs = location.queryTimeoutMs ?? 10_000;
  return {
    connectionString: location.databaseUrl,
    max: use === 'queries' ? 4 : 1,
    types: pgTypes as pg.CustomTypesConfig,
    connectionTimeoutMillis: location.connectTimeoutMs ?? 5_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    // Migrations get longer: adding a column or an index to a large ledger may rightly take
    // minutes, but a stalled connection must still end one day.
    ...(use === 'queries'
      ? { statement_timeout: queryTimeoutMs, query_timeout: queryTimeoutMs }
      : { query_timeout: MIGRATION_TIMEOUT_MS }),
  };
}

const MIGRATION_TIMEOUT_MS = 10 * 60_000;

export async function openDatabase(location: StoreLocation): Promise<OpenedDatabase> {
  if (location.databaseUrl) {
    // Migrations run on their own connection, with their own (longer) query timeout.
    const migrating = openPostgres(poolOptions(location, 'migrations'));
    try {
      await migrate(migrating);
    } finally {
      await migrating.close();
    }
    return openPostgres(poolOptions(location, 'queries'));
  }
  // On a thread of its own: node:sqlite is synchronous (sqlite-thread-dialect.ts). The thread
  // starts on the first query; a file is migrated before that, on this thread (sqlite-here.ts).
  const db = new Kysely<Database>({
    dialect: new SqliteThreadDialect(location.path, { started: location.sqliteThreadStarted }),
  });
  const opened: OpenedDatabase = { db, engine: 'sqlite', close: () => db.destroy() };
  if (location.path === ':memory:') {
    // A throwaway database lives in its thread: it is migrated there.
    await migrate(opened).catch(async (err: unknown) => {
      await db.destroy();
      throw err;
    });
    return opened;
  }
  mkdirSync(dirname(location.path), { recursive: true });
  const here = sqliteHere(location.path);
  try {
    await migrate({ db: here, engine: 'sqlite', close: () => here.destroy() });
  } finally {
    await here.destroy();
  }
  return opened;
}

function openPostgres(options: pg.PoolConfig): OpenedDatabase {
  const pool = new pg.Pool(options);
  const clients = new Set<pg.PoolClient>();
  // An idle client losing its connection (a database restart) must not crash the gateway.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    clients.add(client);
    // Nor may a checked-out one: pg-pool removes its idle listener while a client is in use, so a
    // connection cut mid-query would be an unhandled 'error' event. The query itself still fails
    // (the ledger writer retries it) and the pool discards the dead client on release.
    client.on('error', () => {});
  });
  pool.on('remove', (client) => clients.delete(client));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: discardBrokenClients(pool) }) });
  return {
    db,
    engine: 'postgres',
    async close(timeoutMs = 5_000) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)));
      const result = await Promise.race([db.destroy().then(() => 'closed' as const), timedOut]);
      clearTimeout(timer);
      if (result === 'timeout') for (const client of clients) client.connection.stream.destroy();
    },
  };
}

/**
 * Kysely returns a client to the pool as healthy whatever its last query did. After a query
 * timeout the client is stuck behind the query that never finished (pg keeps it active), so it is
 * released as broken instead: the pool closes it and the next query gets a fresh connection.
 */
function discardBrokenClients(pool: pg.Pool): PostgresPool {
  return {
    options: pool.options,
    end: () => pool.end(),
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let broken = false;
      const query = (text: string, values: readonly unknown[]) =>
        client.query(text, values as unknown[]).catch((err: unknown) => {
          if (classifyStoreError(err) === 'connection') broken = true;
          throw err;
        });
      return {
        processID: (client as unknown as { processID?: number }).processID,
        query: query as unknown as PostgresPoolClient['query'],
        release: (destroy?: boolean) => client.release(destroy || broken),
      };
    },
  };
}

/**
 * Attempts at migrating while other schemas of the database come and go (see below). Each
 * migration run lists the tables several times, and under steady churn (the test: a schema
 * created and dropped back to back) most attempts met a drop: 5 attempts failed the test's ten
 * opens in 5 runs of 6, so an attempt is cheap to repeat and the waits stay short (at most ~3 s).
 */
const MIGRATE_ATTEMPTS = 25;

async function migrate(opened: OpenedDatabase): Promise<void> {
  await migrateStore(opened);
}

/** Migrates to `target` (default: the latest), in sluice's own schema on PostgreSQL. */
export async function migrateStore(opened: OpenedDatabase, target?: string): Promise<MigrationResultSet> {
  const schema = opened.engine === 'postgres' ? await currentSchema(opened.db) : undefined;
  const migrator = new Migrator({ db: opened.db, provider: migrationProvider, migrationTableSchema: schema });
  for (let attempt = 1; ; attempt++) {
    const result = await (target ? migrator.migrateTo(target) : migrator.migrateToLatest());
    if (!result.error) return result;
    if (attempt === MIGRATE_ATTEMPTS || !droppedMeanwhile(result.error, schema)) throw result.error;
    await new Promise((resolve) => setTimeout(resolve, Math.min(20 * attempt, 150)));
  }
}

/**
 * Kysely's Migrator looks for its tables by listing every table of every schema (its
 * introspector calls has_schema_privilege per schema), so a schema another client drops during
 * that query fails it with "schema … does not exist" (3F000) naming that other schema, or
 * "relation "schema.table" does not exist" (42P01) naming one of its tables: another
 * app sharing the database, or a parallel test run cleaning up. Nothing of ours is wrong, and
 * migrations are idempotent, so that one error is retried.
 */
export function droppedMeanwhile(error: unknown, ownSchema: string | undefined): boolean {
  if (!ownSchema || typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof message !== 'string') return false;
  if (code === '3F000') return !message.includes(`"${ownSchema}"`);
  // Or the schema's table, dropped with it during the same listing: named with its schema.
  const table = code === '42P01' ? /^relation "([^".]+)\.[^"]+" does not exist/.exec(message) : null;
  return table !== null && table[1] !== ownSchema;
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

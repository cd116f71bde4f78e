import {
  type DatabaseIntrospector,
  type DialectAdapter,
  Kysely,
  PostgresAdapter,
  type PostgresPool,
  type PostgresPoolClient,
  PostgresDialect,
  sql,
} from 'kysely';
import pg from 'pg';
import { classifyStoreError } from './classify-store-error.ts';
import type { Database } from './database.ts';
import { OwnSchemaIntrospector } from './own-schema-introspector.ts';
import type { OpenedDatabase, StoreLocation } from './store-location.ts';

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
    max: use === 'queries' ? (location.poolSize ?? 4) : 1,
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

/** A pool for `use`, as the store's handle (open-database.ts migrates before queries). */
export function openPostgres(location: StoreLocation, use: 'queries' | 'migrations'): OpenedDatabase {
  const pool = new pg.Pool(poolOptions(location, use));
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
  const db = new Kysely<Database>({ dialect: new PoolerSafeDialect({ pool: discardBrokenClients(pool) }) });
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
 * Kysely's migration lock is a session-level advisory lock taken before its transaction and
 * released after: behind a transaction-mode pooler (PgBouncer) the lock, the transaction and the
 * unlock may each run on a different server connection, and a lock left on one blocks every
 * later start for Kysely's hour of lock_timeout. This one is transaction-level, so it ends with
 * the transaction whatever happens; migrateStore runs the migrator inside a transaction for it.
 * Its key holds the schema: deployments in schemas of one database migrate independently.
 */
class TransactionLockAdapter extends PostgresAdapter {
  override async acquireMigrationLock(db: Kysely<unknown>): Promise<void> {
    await sql`select pg_advisory_xact_lock(hashtext('sluice.migrations:' || current_schema()))`.execute(db);
  }

  override async releaseMigrationLock(): Promise<void> {
    // Released by the transaction's end.
  }
}

class PoolerSafeDialect extends PostgresDialect {
  override createAdapter(): DialectAdapter {
    return new TransactionLockAdapter();
  }

  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new OwnSchemaIntrospector(db);
  }
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

import type { Worker } from 'node:worker_threads';
import type { Kysely } from 'kysely';
import type { Database } from './database.ts';

/** Where the store lives (open-database.ts opens it). */
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
  /** PostgreSQL: connections of the query pool (default 4): the process's share of the connection budget. */
  poolSize?: number;
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

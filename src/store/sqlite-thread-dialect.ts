import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import {
  CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';

/** What the main thread sends the SQLite thread: a query, or the order to close the file and end. */
type ThreadRequest = { id: number; sql: string; parameters: readonly unknown[] } | { close: true };

/** The answer to request `id`; id 0 answers the opening (rows empty) or says why it failed. */
type ThreadResponse =
  | { id: number; rows: unknown[]; changes?: number | bigint; lastInsertRowid?: number | bigint }
  | { id: number; error: CarriedError };

/**
 * An error as node:sqlite raised it in the thread, with what classify-store-error.ts reads:
 * `code`, and for SQLite's own errors `errcode` (the extended result code) and `errstr`.
 */
interface CarriedError {
  name: string;
  message: string;
  code?: unknown;
  errcode?: unknown;
  errstr?: unknown;
}

interface ThreadOptions {
  path: string;
  /** The connection's settings, run once the file is open (SQLITE_SETTINGS). */
  settings: string;
}

/**
 * How sluice uses the SQLite file, on every connection to it (the thread's, and the start-up's
 * migrations in sqlite-here.ts). WAL: readers (the request log) never block the ledger writer;
 * NORMAL is durable across process crashes, which is what a gateway needs. busy_timeout: a write
 * lock held by another process (serve --workers) is waited for, up to 5 s. temp_store: a ledger
 * batch's 100-row statements, in their transaction, need a statement journal, which SQLite spilled
 * past 64 KiB to a new file in /var/tmp on every batch (a read-only root filesystem has none to
 * give); in memory, `bench/ledger-insert.ts --batches 5` under `strace -f` made 2,043 pwrite
 * calls instead of 4,512 and no temp file instead of 8 (CPU per row unchanged within its noise).
 */
export const SQLITE_SETTINGS =
  'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA temp_store = MEMORY;';

/**
 * Kysely's SQLite dialect, with the connection on a worker thread (sqlite-thread.ts). node:sqlite
 * is synchronous: on the main thread, every ledger batch (500 rows: 11-15 ms on the loaded 2-core VM,
 * bench/ledger-insert.ts) and every request log read stopped the event loop, and with it every stream's
 * next chunk (issue 15); so did `busy_timeout`'s wait for another process's write lock
 * (`serve --workers`). Here the main thread only sends the SQL text and its parameters and awaits
 * the rows. There is one connection, as with Kysely's own SQLite driver: SqliteAdapter says so,
 * and Kysely then lends it to one query or transaction at a time (transactions hold it from BEGIN
 * to COMMIT/ROLLBACK, which run in the thread like any statement), so every query keeps the
 * semantics it had in-thread. Hand-written: Kysely's SqliteDialect wants a synchronous database.
 */
export class SqliteThreadDialect implements Dialect {
  private readonly path: string;
  private readonly options: DialectOptions;

  constructor(path: string, options: DialectOptions = {}) {
    this.path = path;
    this.options = options;
  }

  createDriver(): Driver {
    return new SqliteThreadDriver(this.path, this.options);
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new SqliteAdapter();
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}

export interface DialectOptions {
  /** Each thread once its file is open, the first and any that replaces one (fault tests end them). */
  started?: (thread: Worker) => void;
}

class SqliteThreadDriver implements Driver {
  private readonly path: string;
  private readonly options: DialectOptions;
  private connection: SqliteThreadConnection | undefined;
  private reopening: Promise<void> | undefined;

  constructor(path: string, options: DialectOptions) {
    this.path = path;
    this.options = options;
  }

  /** Starts the thread and opens the file there: rejects with node:sqlite's error when it cannot. */
  async init(): Promise<void> {
    this.connection = await this.open();
  }

  private async open(): Promise<SqliteThreadConnection> {
    const connection = await SqliteThreadConnection.open({ path: this.path, settings: SQLITE_SETTINGS });
    this.options.started?.(connection.thread);
    return connection;
  }

  /**
   * A thread that ended by itself (a bug, an out-of-memory end) is replaced by the next query: the
   * file is opened again in a new thread, and what the old one had not committed SQLite rolled
   * back. Until then its queries failed as a lost connection, which the ledger writer retries
   * (ledger-writer.ts), so no record is lost. A `:memory:` database ended with its thread.
   */
  async acquireConnection(): Promise<DatabaseConnection> {
    if (!this.connection) throw new Error('the SQLite thread is not started');
    if (this.connection.crashed && this.path !== ':memory:') {
      this.reopening ??= this.open()
        .then((connection) => {
          this.connection = connection;
        })
        .finally(() => {
          this.reopening = undefined;
        });
      await this.reopening;
    }
    return this.connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    await this.connection?.close();
  }
}

interface Waiting {
  resolve: (result: QueryResult<unknown>) => void;
  reject: (err: Error) => void;
}

/** The main thread's end of the SQLite thread: queries out, rows or errors back, matched by id. */
class SqliteThreadConnection implements DatabaseConnection {
  readonly thread: Worker;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  /** Why queries are refused from now on: the store was closed, or the thread is gone. */
  private refusal: Error | undefined;
  private endedUnasked = false;
  private readonly exited: Promise<void>;

  private constructor(thread: Worker, exited: Promise<void>) {
    this.thread = thread;
    this.exited = exited;
    thread.on('message', (response: ThreadResponse) => this.answer(response));
  }

  static async open(options: ThreadOptions): Promise<SqliteThreadConnection> {
    const worker = new Worker(threadSource(), {
      workerData: options satisfies ThreadOptions,
      // The gateway's own flags (--cpu-prof, --import hooks) are not the thread's business.
      execArgv: [],
    });
    let failure: Error | undefined;
    worker.on('error', (err) => (failure ??= err));
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const opened = await new Promise<ThreadResponse | undefined>((resolve) => {
      worker.once('message', resolve);
      void exited.then(() => resolve(undefined));
    });
    if (!opened || 'error' in opened) {
      await exited;
      throw opened && 'error' in opened ? revive(opened.error) : (failure ?? new Error('the SQLite thread ended while opening'));
    }
    const connection = new SqliteThreadConnection(worker, exited);
    // Closed, it has answered every query sent before; gone otherwise (a crash), it never will.
    void exited.then(() => connection.lost(threadEnded(failure)));
    // Idle, the thread never keeps the process alive by itself (a query in flight references it).
    worker.unref();
    return connection;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if (this.refusal) throw this.refusal;
    const id = this.nextId++;
    const request: ThreadRequest = { id, sql: compiled.sql, parameters: compiled.parameters };
    const result = new Promise<QueryResult<unknown>>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    try {
      this.thread.postMessage(request);
    } catch (err) {
      this.waiting.delete(id);
      // A value no thread message can hold (a function, a symbol): node:sqlite would have refused
      // to bind it too, with this code, which says the data is at fault.
      throw Object.assign(new TypeError(`SQLite cannot bind a parameter: ${(err as Error).message}`), {
        code: 'ERR_INVALID_ARG_TYPE',
      });
    }
    this.thread.ref();
    return (await result) as QueryResult<R>;
  }

  /** Only select queries, like Kysely's SQLite driver; the rows come in one answer (nothing in sluice streams a query). */
  async *streamQuery<R>(compiled: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(compiled.query)) throw new Error('the SQLite thread only streams select queries');
    const { rows } = await this.executeQuery<R>(compiled);
    for (let i = 0; i < rows.length; i += Math.max(1, chunkSize)) yield { rows: rows.slice(i, i + Math.max(1, chunkSize)) };
  }

  /** Closes the file in the thread, after every query sent before, and waits for the thread to end. */
  async close(): Promise<void> {
    if (!this.refusal) {
      this.refusal = new Error('the SQLite database is closed');
      this.thread.postMessage({ close: true } satisfies ThreadRequest);
      // Referenced until it ends: a process may wait for its file to be closed.
      this.thread.ref();
    }
    await this.exited;
  }

  private answer(response: ThreadResponse): void {
    const waiting = this.waiting.get(response.id);
    if (!waiting) return;
    this.waiting.delete(response.id);
    if (this.waiting.size === 0 && !this.refusal) this.thread.unref();
    if ('error' in response) return waiting.reject(revive(response.error));
    const { rows, changes, lastInsertRowid } = response;
    waiting.resolve(
      changes === undefined
        ? { rows }
        : { rows, numAffectedRows: BigInt(changes), insertId: lastInsertRowid == null ? undefined : BigInt(lastInsertRowid) },
    );
  }

  /** The thread ended without being closed: nothing will answer on this connection again. */
  get crashed(): boolean {
    return this.endedUnasked;
  }

  private lost(reason: Error): void {
    if (!this.refusal) this.endedUnasked = true;
    this.refusal ??= reason;
    for (const waiting of this.waiting.values()) waiting.reject(reason);
    this.waiting.clear();
  }
}

/**
 * The thread's module as a data: URL, which Node loads as JavaScript: sqlite-thread.ts is written
 * in the JavaScript subset, so from a checkout (src/*.ts) the thread does without Node's
 * TypeScript stripper (~12 MiB of RSS: ~14 MiB for the thread instead of ~26 MiB). Beside this
 * file: .ts in a checkout, .js in the built package (dist/), where the compiler rewrites import
 * specifiers but not this URL.
 */
function threadSource(): URL {
  const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const text = readFileSync(new URL(`./sqlite-thread${extension}`, import.meta.url), 'utf8');
  return new URL(`data:text/javascript,${encodeURIComponent(text)}`);
}

/** Why a connection whose thread ended refuses queries: a lost connection (classify-store-error.ts), retried. */
export const THREAD_ENDED = 'ERR_SQLITE_THREAD_ENDED';

function threadEnded(cause: Error | undefined): Error {
  const message = `the SQLite thread ended${cause ? `: ${cause.message}` : ''}`;
  return Object.assign(new Error(message, { cause }), { code: THREAD_ENDED });
}

/** node:sqlite's error again, on this side: its class, message and the codes classifyStoreError reads. */
function revive(carried: CarriedError): Error {
  const Kind = carried.name === 'TypeError' ? TypeError : carried.name === 'RangeError' ? RangeError : Error;
  const err = new Kind(carried.message);
  for (const key of ['code', 'errcode', 'errstr'] as const)
    if (carried[key] !== undefined) Object.assign(err, { [key]: carried[key] });
  return err;
}

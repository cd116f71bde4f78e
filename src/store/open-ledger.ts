import { dirname, join } from 'node:path';
import type { Kysely } from 'kysely';
import type { UnfinishedRequest } from '../accounting/journal-entries.ts';
import type { Config } from '../config/schema.ts';
import { describeStoreError } from './classify-store-error.ts';
import { engineOf } from './engine-of.ts';
import type { Database } from './database.ts';
import { LedgerJournal, type RequestJournal } from './ledger-journal.ts';
import { LedgerStore } from './ledger-store.ts';
import { type Retention, upkeepLedger } from './ledger-upkeep.ts';
import { LedgerWriter } from './ledger-writer.ts';
import { SpillFiles } from './ledger-spill.ts';
import { openDatabase } from './open-database.ts';
import type { OpenedDatabase, StoreLocation } from './store-location.ts';
import { RejectionCounter, RejectionStore } from './rejection-counter.ts';
import { RelayedIdsStore } from './relayed-ids-store.ts';
import { UnusableStoreError } from './unusable-store-error.ts';
import { ResponsesStore } from './responses-store.ts';

export interface LedgerSettings {
  store: StoreLocation;
  writer: { flushIntervalMs: number; batchSize: number; maxBuffered: number };
  /** The durable mode's journal (ledger-journal.ts); none: records wait in memory only. */
  journal?: { dir: string; syncMs: number; progressMs: number };
  /**
   * Where a shutdown saves the records it could not write when there is no journal, and where
   * the next start looks for them (ledger-spill.ts); none: they are lost, and said so.
   */
  spillDir?: string;
  /** How long a shutdown may spend writing what is buffered before it gives up on it. */
  shutdownFlushMs: number;
  /** What the upkeep keeps (ledger-upkeep.ts); none: nothing is dropped, and no partition made ahead. */
  retention?: Retention;
  log: (message: string) => void;
  /** Called once the store is open (at start, or later after retries), with its readers. */
  onOpen?: (stores: {
    ledgerStore: LedgerStore;
    responsesStore: ResponsesStore;
    relayedIds: RelayedIdsStore;
    database: Kysely<Database>;
  }) => void;
  /** Retry delays while the store cannot be opened: doubling from `firstMs` up to `maxMs`. */
  retry?: { firstMs: number; maxMs: number };
  /** How long start-up waits for the first attempt before serving without the store. */
  firstAttemptMs?: number;
  /** For tests: how the store is opened. */
  open?: (location: StoreLocation) => Promise<OpenedDatabase>;
}

export interface Ledger {
  /** Takes records from the first request on, whether the store is open yet or not. */
  writer: LedgerWriter;
  /**
   * Requests refused at the door, counted per minute, surface and code instead of a ledger row
   * each (rejection-counter.ts): `rejections.count('chat', error.code)`.
   */
  rejections: RejectionCounter;
  /** Resolves when the store is open (never rejects: failures are retried and logged). */
  opened: Promise<void>;
  /** The store is open now. */
  readonly isOpen: boolean;
  /** The durable mode's journal of running requests; undefined without the journal. */
  requests: RequestJournal | undefined;
  /**
   * What a previous run left running (durable mode): each needs its row, as interrupted
   * (pipeline/record-interrupted.ts). One whose row the store turns out to have is `forget`-ten.
   */
  unfinished: readonly UnfinishedRequest[];
  forget(requestId: string): void;
  /** Flushes within `shutdownFlushMs`, then closes the journal and the store, in bounded time. */
  close(): Promise<void>;
}

/** The settings a gateway's config gives (the `store` and `ledger` sections). */
export function ledgerSettings(config: Config, log: (message: string) => void, onOpen: LedgerSettings['onOpen']): LedgerSettings {
  const { store, ledger } = config;
  const besideStore = join(dirname(store.path === ':memory:' ? '.sluice/x' : store.path), 'ledger-journal');
  const journalDir = ledger.journal ?? (ledger.durable ? besideStore : undefined);
  return {
    store: {
      databaseUrl: store.database_url,
      path: store.path,
      connectTimeoutMs: store.connect_timeout_ms,
      queryTimeoutMs: store.query_timeout_ms,
      poolSize: store.pool_size,
    },
    retention: {
      rowsDays: ledger.retention.rows_days,
      contentDays: ledger.retention.content_days,
      rollupDays: ledger.retention.rollups_days,
    },
    writer: { flushIntervalMs: ledger.flush_interval_ms, batchSize: ledger.batch_size, maxBuffered: ledger.max_buffered },
    journal: journalDir ? { dir: journalDir, syncMs: ledger.journal_sync_ms, progressMs: ledger.journal_progress_ms } : undefined,
    // A store kept in memory names no place on the disk: nothing is spilled then, unless a journal directory is set.
    spillDir: journalDir ?? (store.path === ':memory:' ? undefined : besideStore),
    shutdownFlushMs: ledger.shutdown_flush_ms,
    log,
    onOpen,
  };
}

/**
 * Starts the ledger: the journal's leftovers first (durable mode), then the store. When the store
 * cannot be opened (PostgreSQL down at start-up), sluice serves anyway: the writer buffers
 * records in memory (up to max_buffered, and in the journal when there is one) while the store is
 * retried in the background, with a log line that says so; once it opens, the backlog is written.
 * Resolves after the first attempt (or `firstAttemptMs`, whichever is first), so a healthy store
 * is open before the first request. Rejects when that attempt finds a store that retrying cannot
 * fix (UnusableStoreError: sluice's tables without the record of their migrations).
 */
export async function startLedger(settings: LedgerSettings): Promise<Ledger> {
  const { log } = settings;
  const open = settings.open ?? openDatabase;
  const retry = settings.retry ?? { firstMs: 1_000, maxMs: 30_000 };
  const where = describeLocation(settings.store);
  const fromJournal = settings.journal ? LedgerJournal.open({ ...settings.journal, log }) : undefined;
  const spills = new SpillFiles(settings.spillDir, log);
  const writer = new LedgerWriter(undefined, {
    ...settings.writer,
    log,
    journal: fromJournal?.journal,
    replayed: fromJournal?.replayed,
    spill: settings.journal ? undefined : spills.saver(),
  });
  spills.replayInto(writer);
  const rejections = new RejectionCounter(undefined, { flushIntervalMs: Math.max(settings.writer.flushIntervalMs, 1_000), log });

  let database: OpenedDatabase | undefined;
  let responsesStore: ResponsesStore | undefined;
  let relayedIds: RelayedIdsStore | undefined;
  let closing = false;
  let retryTimer: NodeJS.Timeout | undefined;
  let upkeep: { stop(): void } | undefined;
  let attempts = 0;
  /** Set once startLedger has returned: from then on every failure is retried. */
  let serving = false;
  let isOpen = false;
  let markOpened: () => void = () => {};
  const opened = new Promise<void>((resolve) => (markOpened = resolve));

  async function attempt(): Promise<boolean> {
    attempts++;
    let db: OpenedDatabase;
    try {
      db = await open(settings.store);
    } catch (err) {
      if (closing) return false;
      // A store that can never open as it is ends the start, with its reason; once serving, it is logged and retried like any.
      if (err instanceof UnusableStoreError && !serving) throw err;
      const delay = Math.min(retry.firstMs * 2 ** (attempts - 1), retry.maxMs);
      log(
        attempts === 1
          ? `ledger: the store (${where}) is unavailable: ${describeStoreError(err)}. Serving anyway: records wait in memory ` +
              `(up to ${settings.writer.maxBuffered}${settings.journal ? `, and in the journal ${settings.journal.dir}` : ''}) ` +
              `until it opens; retrying in ${delay} ms`
          : `ledger: the store (${where}) is still unavailable (attempt ${attempts}): ${describeStoreError(err)}; ` +
              `${writer.pending} record(s) waiting; retrying in ${delay} ms`,
      );
      retryTimer = setTimeout(() => void attempt(), delay);
      retryTimer.unref();
      return false;
    }
    if (closing) {
      await db.close();
      return false;
    }
    database = db;
    const ledgerStore = new LedgerStore(db.db);
    responsesStore = new ResponsesStore(db.db);
    relayedIds = new RelayedIdsStore(db.db);
    settings.onOpen?.({ ledgerStore, responsesStore, relayedIds, database: db.db });
    if (attempts > 1)
      log(`ledger: the store (${where}) is open after ${attempts} attempts; writing the ${writer.pending} record(s) that waited`);
    writer.attach(ledgerStore);
    rejections.attach(new RejectionStore(db.db));
    if (settings.retention) upkeep = startUpkeep(db.db, settings.retention, log);
    isOpen = true;
    markOpened();
    return true;
  }

  const first = attempt();
  let waited: NodeJS.Timeout | undefined;
  const firstAttemptMs = settings.firstAttemptMs ?? (settings.store.connectTimeoutMs ?? 5_000) + 5_000;
  const slow = new Promise<'slow'>((r) => (waited = setTimeout(() => r('slow'), firstAttemptMs)));
  try {
    if ((await Promise.race([first, slow])) === 'slow') {
      log(`ledger: the store (${where}) is taking long to open (migrations?); serving meanwhile, records wait in memory`);
    }
  } catch (err) {
    // Nothing was served: the journal's lock goes, and what it holds stays for the next start.
    fromJournal?.journal.close();
    throw err;
  } finally {
    clearTimeout(waited);
  }
  serving = true;

  const journal = fromJournal?.journal;
  return {
    writer,
    rejections,
    opened,
    get isOpen() {
      return isOpen;
    },
    requests: journal,
    unfinished: fromJournal?.unfinished ?? [],
    forget: (requestId) => journal?.forget(requestId),
    async close() {
      closing = true;
      clearTimeout(retryTimer);
      upkeep?.stop();
      await writer.close(settings.shutdownFlushMs);
      await rejections.close(1_000);
      // Responses saves end within the query timeout; this only bounds a store that is gone.
      if (responsesStore) await within(responsesStore.settle(), 2_000);
      if (relayedIds) await within(relayedIds.settle(), 2_000);
      fromJournal?.journal.close();
      await database?.close();
    },
  };
}

/** How often each process runs the ledger's upkeep (each run bounded; one instance at a time on PostgreSQL). */
const UPKEEP_EVERY_MS = 10 * 60_000;
/**
 * On PostgreSQL the first run is at once: it creates the partitions the rows are about to land
 * in. On SQLite it only deletes, which can wait a minute: a query at start-up would start the
 * SQLite thread (~13 MiB) before the first request needs it (docs/benchmarks/memory.md).
 */
const FIRST_SQLITE_UPKEEP_MS = 60_000;

/** Runs the upkeep now and every UPKEEP_EVERY_MS; logs what it dropped, and its failures (retried next time). */
function startUpkeep(db: Kysely<Database>, retention: Retention, log: (message: string) => void): { stop(): void } {
  const run = () =>
    upkeepLedger(db, retention, Date.now()).then(
      (report) => {
        if (report.dropped.length > 0 || report.deleted > 0) {
          const freed =
            report.dropped.length > 0 ? ` (${report.dropped.join(', ')}: ${Math.round(report.bytesFreed / 1e6)} MB)` : '';
          log(`ledger: retention dropped ${report.dropped.length} partition(s)${freed}, deleted ${report.deleted} row(s)`);
        }
      },
      (err: unknown) => log(`ledger: upkeep failed (${describeStoreError(err)}); tried again in ${UPKEEP_EVERY_MS / 60_000} min`),
    );
  const runAndWait = () => {
    void run();
    timer = setTimeout(runAndWait, UPKEEP_EVERY_MS).unref();
  };
  let timer = setTimeout(runAndWait, engineOf(db) === 'postgres' ? 0 : FIRST_SQLITE_UPKEEP_MS).unref();
  return { stop: () => clearTimeout(timer) };
}

/** Where the store is, for log lines: never the password of a database URL. */
function describeLocation(store: StoreLocation): string {
  if (!store.databaseUrl) return `SQLite ${store.path}`;
  try {
    const url = new URL(store.databaseUrl);
    return `PostgreSQL ${url.hostname}:${url.port || 5432}${url.pathname}`;
  } catch {
    return 'PostgreSQL';
  }
}

async function within(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

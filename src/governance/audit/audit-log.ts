import { randomBytes } from 'node:crypto';
import { errors } from '../../errors/catalog.ts';
import type { AuditEntry, AuditStore } from '../../store/audit-store.ts';
import { describeStoreError } from '../../store/classify-store-error.ts';

export interface AuditLogOptions {
  /** The ledger's store is configured (ledger.enabled): entries go there; without one, to sluice's log. */
  stored: boolean;
  /** audit.retention_days of the config in force (a reload changes it); 0 keeps every entry. */
  retentionDays: () => number;
  log: (message: string) => void;
  /** Where an entry goes when there is no store: sluice's structured log. */
  logEntry: (entry: AuditEntry) => void;
  now?: () => number;
  /** The first pruning run, this long after the store opens (default FIRST_PRUNE_MS; 0: at once). */
  firstPruneMs?: number;
}

/** Entries deleted per statement, and statements per pruning run: bounded work whatever the backlog. */
const PRUNE_BATCH = 1_000;
const PRUNE_BATCHES_PER_RUN = 50;
/** How often each process prunes. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;
/**
 * The first run waits a minute after the store opens: nothing is urgent about old entries, and on
 * the embedded store a query at start-up would start the SQLite thread (~13 MiB, a V8 isolate)
 * before the first request needs it (docs/benchmarks/memory.md).
 */
const FIRST_PRUNE_MS = 60_000;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A gateway's audit log: entries are written to the store before the request that made them is
 * answered (an admin change is rare, and an entry must not be lost: a write that fails fails the
 * answer with 503). A gateway without a store (ledger.enabled: false) has no admin changes to
 * record (keys and projects live in the store), and writes its other entries (sign-ins, reloads)
 * to its log.
 */
export class AuditLog {
  private store: AuditStore | undefined;
  private timer: NodeJS.Timeout | undefined;
  private firstRun: NodeJS.Timeout | undefined;
  private pruning: Promise<unknown> | undefined;
  private readonly options: AuditLogOptions;
  private readonly now: () => number;

  constructor(options: AuditLogOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  /** The store is open: entries go there, and old ones are pruned soon and then every hour. */
  attach(store: AuditStore): void {
    this.store = store;
    const first = this.options.firstPruneMs ?? FIRST_PRUNE_MS;
    if (first === 0) this.runPrune();
    else this.firstRun = setTimeout(() => this.runPrune(), first).unref();
    this.timer = setInterval(() => this.runPrune(), PRUNE_EVERY_MS);
    this.timer.unref();
  }

  /** A new entry's id and time. */
  stamp(): Pick<AuditEntry, 'id' | 'createdAt'> {
    return { id: `aud_${randomBytes(12).toString('hex')}`, createdAt: this.now() };
  }

  async append(entry: AuditEntry): Promise<void> {
    if (!this.options.stored) {
      this.options.logEntry(entry);
      return;
    }
    const store = this.reader();
    try {
      await store.append(entry);
    } catch (err) {
      this.options.log(
        `audit: could not write the entry of ${entry.action} (request ${entry.requestId}): ${describeStoreError(err)}`,
      );
      throw errors.storeUnavailable('the audit entry could not be written');
    }
  }

  /** The store, to read: a 400 when there is none (ledger.enabled: false), a 503 while it is not open. */
  reader(): AuditStore {
    if (!this.options.stored)
      throw errors.invalidRequest('The audit log is kept in the store, and there is none (ledger.enabled: false).');
    if (!this.store) throw errors.storeUnavailable('the store is not open yet (sluice retries it; see its log)');
    return this.store;
  }

  /**
   * Deletes the entries past the retention, oldest first, a batch per statement and at most
   * PRUNE_BATCHES_PER_RUN batches (the next run goes on); returns how many.
   */
  async prune(now = this.now()): Promise<number> {
    const days = this.options.retentionDays();
    if (!this.store || days === 0) return 0;
    let deleted = 0;
    for (let i = 0; i < PRUNE_BATCHES_PER_RUN; i++) {
      const n = await this.store.prune(now - days * DAY_MS, PRUNE_BATCH);
      deleted += n;
      if (n < PRUNE_BATCH) break;
    }
    return deleted;
  }

  /** Waits for a pruning run under way, and runs no more. */
  async close(): Promise<void> {
    clearTimeout(this.firstRun);
    clearInterval(this.timer);
    await this.pruning;
  }

  private runPrune(): void {
    if (this.pruning) return;
    this.pruning = this.prune()
      .catch((err: unknown) => this.options.log(`audit: could not prune old entries: ${describeStoreError(err)}`))
      .finally(() => (this.pruning = undefined));
  }
}

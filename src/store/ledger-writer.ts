import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { classifyStoreError, describeStoreError, type StoreErrorKind } from './classify-store-error.ts';
import { sanitizeRecord, setAsideRecord } from './sanitize-record.ts';

export interface LedgerSink {
  insert(records: readonly LedgerRecord[]): Promise<void>;
}

/** Where accepted records are kept durably until the store has them (ledger-journal.ts). */
export interface RecordJournal {
  /** Called before a record enters the buffer; a throw is logged and the record still buffered. */
  append(record: LedgerRecord): void;
  /** The oldest `count` records appended (in order) are now in the store. */
  written(count: number): void;
  /** Where the journal lives, for log lines. */
  readonly location: string;
}

export interface LedgerWriterOptions {
  flushIntervalMs: number;
  batchSize: number;
  /** Records held while the database is slow or down; past it new records are dropped, loudly. */
  maxBuffered: number;
  log?: (message: string) => void;
  /** Retry backoff: doubles from 100 ms up to this (default 5 s). */
  maxBackoffMs?: number;
  journal?: RecordJournal;
  /** Records replayed from the journal at start: they go first, and are already journaled. */
  replayed?: readonly LedgerRecord[];
  /**
   * Without a journal: where a shutdown that could not write everything saves the rest
   * (ledger-spill.ts), for the next start. Returns where they went; a throw means they are lost.
   */
  spill?: (records: readonly LedgerRecord[]) => string;
}

export interface LedgerWriterStats {
  pending: number;
  /** Records never written: buffer full, arrived after close, or refused even when set aside. */
  dropped: number;
  /** Failed insert attempts (each retry counts). */
  failures: number;
  /** Records the database refused, written in their set-aside form instead (sanitize-record.ts). */
  setAside: number;
  /** Records that had a value sanitizeRecord changed (a NUL, a bad count, an over-long text). */
  sanitized: number;
}

/**
 * An unknown error (neither surely data nor surely the connection) is retried this many times
 * before the batch is split to look for a bad row: a database that is really down fails the
 * split's first insert the same way, which ends the split at no cost but one query.
 */
const UNKNOWN_RETRIES = 3;

/**
 * Keeps ledger writes off the streaming path: `write` sanitizes the record and appends it to a
 * buffer (and to the journal first, when there is one); batches go to the database in the
 * background.
 * - A batch that fails for a connection reason stays at the head of the buffer and is retried
 *   with backoff (doubling, capped), so a slow or briefly unavailable database loses nothing;
 *   each failure logs how many records are at risk.
 * - A batch the database refuses for a data reason is split in halves until the refused rows are
 *   alone; each is written in its set-aside form (setAsideRecord) and logged with its request id,
 *   and the rows behind it are never held up.
 * - `close` flushes what it can within its time limit, then says how many records were lost.
 */
export class LedgerWriter {
  private readonly options: LedgerWriterOptions;
  /** Undefined until the store is open (start-up with the database down): records only wait. */
  private sink: LedgerSink | undefined;
  private attached: Promise<void>;
  private markAttached: () => void = () => {};
  private buffer: LedgerRecord[];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private backoffMs = 0;
  /** Failures in a row of the batch at the head (reset by any success). */
  private consecutiveFailures = 0;
  private readonly counts = { dropped: 0, failures: 0, setAside: 0, sanitized: 0 };
  private closed = false;
  /** Set when `close` timed out: nothing retries after that. */
  private abandoned = false;
  private readonly writtenListeners: ((records: readonly LedgerRecord[]) => void)[] = [];

  constructor(sink: LedgerSink | undefined, options: LedgerWriterOptions) {
    this.sink = sink;
    this.attached = sink ? Promise.resolve() : new Promise((r) => (this.markAttached = r));
    this.options = options;
    this.buffer = [];
    for (const record of options.replayed ?? []) this.buffer.push(sanitizeRecord(record).record);
    if (this.buffer.length > 0) this.kick(0);
  }

  get pending(): number {
    return this.buffer.length;
  }

  /**
   * The store is attached and refused or dropped the last write (a retry is pending), or is not
   * open yet: a reader should not wait on a flush, which would only wait out the outage.
   */
  get failing(): boolean {
    return !this.sink || this.consecutiveFailures > 0;
  }

  get stats(): LedgerWriterStats {
    return { pending: this.buffer.length, ...this.counts };
  }

  write(record: LedgerRecord): void {
    if (this.closed) {
      // After shutdown's flush nothing would write it: say so instead of losing it silently.
      this.counts.dropped++;
      this.log(`ledger: record ${record.requestId} arrived after the ledger closed; not written`);
      return;
    }
    // The head of the buffer may be in flight, so a full buffer refuses the newest record.
    if (this.buffer.length >= this.options.maxBuffered) {
      this.counts.dropped++;
      if (this.counts.dropped === 1 || this.counts.dropped % 1000 === 0) {
        this.log(`ledger: buffer full (${this.options.maxBuffered}); ${this.counts.dropped} record(s) dropped so far`);
      }
      return;
    }
    const { record: clean, changed } = sanitizeRecord(record);
    if (changed.length > 0) {
      this.counts.sanitized++;
      // Rate-limited: a client can send any number of bad model names.
      const n = this.counts.sanitized;
      if (n <= 10 || n % 1000 === 0) {
        this.log(
          `ledger: record ${clean.requestId} had values the store cannot hold (${changed.join(', ')}); stored sanitized (${n} so far)`,
        );
      }
    }
    if (this.options.journal) {
      try {
        this.options.journal.append(clean);
      } catch (err) {
        this.log(
          `ledger: journal ${this.options.journal.location}: append failed, record ${clean.requestId} is only in memory: ${describeStoreError(err)}`,
        );
      }
    }
    this.buffer.push(clean);
    this.kick(this.nextDelay());
  }

  /** Told of every batch once it is in the store (the budgets learn that their spend is). */
  onWritten(listener: (records: readonly LedgerRecord[]) => void): void {
    this.writtenListeners.push(listener);
  }

  /** Points the writer at the store once it is open (start-up with the store down) and writes at once. */
  attach(sink: LedgerSink): void {
    this.sink = sink;
    this.markAttached();
    this.retryNow();
  }

  /** Ends a retry backoff early: the store is known to be back. */
  retryNow(): void {
    this.backoffMs = 0;
    if (this.buffer.length > 0 && !this.closed) this.kick(0);
  }

  /** Writes everything buffered now; resolves when the buffer is empty (retrying as needed). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.buffer.length > 0 && !this.abandoned) {
      if (!this.sink) {
        await this.attached;
        continue;
      }
      await this.flushOnce();
      if (this.buffer.length > 0 && this.backoffMs > 0 && !this.abandoned) await sleep(this.backoffMs);
    }
  }

  /**
   * Stops taking records and flushes, for at most `timeoutMs`: a database that does not answer
   * (down, or a half-open connection) must not hold a shutdown. Says how many records were lost.
   */
  async close(timeoutMs = 10_000): Promise<{ lost: number }> {
    this.closed = true;
    clearTimeout(this.timer);
    const done = this.flush();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((r) => {
      timer = setTimeout(() => r('timeout'), timeoutMs);
    });
    const result = await Promise.race([done.then(() => 'done' as const), timeout]);
    clearTimeout(timer);
    if (result === 'done') return { lost: 0 };
    // Stop the retry loop too: left running it would keep a stopped gateway's process alive.
    this.abandoned = true;
    return this.keepUnwritten(timeoutMs);
  }

  /**
   * What a shutdown does with the records it could not write: the journal has them already, or
   * they are saved to a spill file; lost (and said so) only when neither is possible.
   */
  private keepUnwritten(timeoutMs: number): { lost: number } {
    const left = this.buffer.length;
    if (left === 0) return { lost: 0 };
    const notWritten = `ledger: shutdown: ${left} record(s) not written within ${timeoutMs} ms`;
    const { journal, spill } = this.options;
    if (journal) {
      this.log(`${notWritten}; kept in the journal ${journal.location}, written at the next start`);
      return { lost: 0 };
    }
    if (spill) {
      try {
        this.log(`${notWritten}; saved to ${spill(this.buffer)}, written at the next start`);
        return { lost: 0 };
      } catch (err) {
        this.log(`${notWritten}, nor saved to a spill file (${describeStoreError(err)}): they are lost`);
        return { lost: left };
      }
    }
    this.log(`ledger: shutdown: ${left} record(s) could not be written within ${timeoutMs} ms and are lost`);
    return { lost: left };
  }

  /**
   * When the next batch should go: after the backoff while the database is failing, at once when
   * a full batch is waiting (else a busy gateway would write one batch per interval, fall behind
   * and end up dropping records), else after the flush interval.
   */
  private nextDelay(): number {
    if (this.backoffMs > 0) return this.backoffMs;
    return this.buffer.length >= this.options.batchSize ? 0 : this.options.flushIntervalMs;
  }

  private kick(delayMs: number): void {
    // A batch in flight schedules the next one when it settles; attach() starts the first.
    if (this.flushing || !this.sink) return;
    if (this.timer) {
      // A full batch need not wait out a pending interval (but does wait out a retry backoff).
      if (delayMs > 0 || this.backoffMs > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flushOnce().then(() => {
        if (this.buffer.length > 0 && !this.closed) this.kick(this.nextDelay());
      });
    }, delayMs);
    this.timer.unref();
  }

  private flushOnce(): Promise<void> {
    this.flushing ??= this.writeBatch().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async writeBatch(): Promise<void> {
    const sink = this.sink;
    const batch = this.buffer.slice(0, this.options.batchSize);
    if (batch.length === 0 || !sink) return;
    try {
      try {
        await sink.insert(batch);
      } catch (err) {
        const kind = classifyStoreError(err);
        const persistent = kind === 'unknown' && this.consecutiveFailures + 1 >= UNKNOWN_RETRIES;
        if (kind !== 'data' && !persistent) throw err;
        await this.isolate(batch, err);
      }
    } catch (err) {
      this.failed(batch.length, err);
      return;
    }
    // Only now are they safe: remove exactly what was written (new records may have arrived).
    this.buffer.splice(0, batch.length);
    this.options.journal?.written(batch.length);
    this.backoffMs = 0;
    this.consecutiveFailures = 0;
    for (const listener of this.writtenListeners) listener(batch);
  }

  /**
   * Finds the rows the database refuses by splitting `rows` (which failed as a whole) in halves:
   * about 2·log2(n) extra inserts for one bad row in n. The insert is idempotent (ON CONFLICT DO
   * NOTHING), so halves written before a later failure are harmless to write again. A connection
   * failure on the way throws: the whole batch waits for the retry.
   */
  private async isolate(rows: readonly LedgerRecord[], err: unknown): Promise<void> {
    if (rows.length === 1) return this.setAside(rows[0], err);
    const mid = rows.length >>> 1;
    for (const half of [rows.slice(0, mid), rows.slice(mid)]) {
      try {
        await this.sink?.insert(half);
      } catch (halfErr) {
        if (classifyStoreError(halfErr) === 'connection') throw halfErr;
        await this.isolate(half, halfErr);
      }
    }
  }

  private async setAside(row: LedgerRecord, err: unknown): Promise<void> {
    const reason = describeStoreError(err);
    try {
      await this.sink?.insert([setAsideRecord(row, reason)]);
    } catch (again) {
      // Every value of the set-aside form is plain ASCII or a checked number: if the database
      // still refuses it for something other than data, the database is the problem.
      if (classifyStoreError(again) !== 'data') throw again;
      this.counts.dropped++;
      this.log(
        `ledger: record ${row.requestId} refused by the store (${reason}), and its set-aside form too (${describeStoreError(again)}); dropped`,
      );
      return;
    }
    this.counts.setAside++;
    this.log(`ledger: record ${row.requestId} refused by the store (${reason}); written set aside, its text replaced`);
  }

  private failed(batchSize: number, err: unknown): void {
    this.counts.failures++;
    this.consecutiveFailures++;
    const kind: StoreErrorKind = classifyStoreError(err);
    this.backoffMs = Math.min(this.backoffMs ? this.backoffMs * 2 : 100, this.options.maxBackoffMs ?? 5_000);
    const held = this.whereHeld();
    this.log(
      `ledger: write of ${batchSize} record(s) failed (${kind}: ${describeStoreError(err)}); ` +
        `${this.buffer.length} record(s) at risk, ${held}; retrying in ${this.backoffMs} ms`,
    );
  }

  /** Where records waiting for the store are, for the failure log: what a stop or a crash would cost. */
  private whereHeld(): string {
    const { journal, spill } = this.options;
    if (journal) return `held in memory and in the journal ${journal.location}`;
    if (spill) return 'held in memory only, spilled to disk if sluice stops first, lost if it crashes';
    return 'held in memory only, lost if sluice stops first';
  }

  private log(message: string): void {
    this.options.log?.(message);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

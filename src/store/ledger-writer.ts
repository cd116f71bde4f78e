import type { LedgerRecord } from '../accounting/ledger-record.ts';

export interface LedgerSink {
  insert(records: readonly LedgerRecord[]): Promise<void>;
}

export interface LedgerWriterOptions {
  flushIntervalMs: number;
  batchSize: number;
  /** Records held while the database is slow or down; past it new records are dropped, loudly. */
  maxBuffered: number;
  log?: (message: string) => void;
}

/**
 * Keeps ledger writes off the streaming path: `write` only appends to a buffer; batches go to
 * the database in the background, and a failed batch stays at the head of the buffer and is
 * retried with backoff, so a slow or briefly unavailable database loses nothing. `close`
 * flushes what is left (graceful shutdown).
 */
export class LedgerWriter {
  private readonly sink: LedgerSink;
  private readonly options: LedgerWriterOptions;
  private buffer: LedgerRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private backoffMs = 0;
  private dropped = 0;
  private failures = 0;
  private closed = false;
  /** Set when `close` timed out: nothing retries after that. */
  private abandoned = false;

  constructor(sink: LedgerSink, options: LedgerWriterOptions) {
    this.sink = sink;
    this.options = options;
  }

  get pending(): number {
    return this.buffer.length;
  }

  get stats(): { pending: number; dropped: number; failures: number } {
    return { pending: this.buffer.length, dropped: this.dropped, failures: this.failures };
  }

  write(record: LedgerRecord): void {
    // The head of the buffer may be in flight, so a full buffer refuses the newest record.
    if (this.buffer.length >= this.options.maxBuffered) {
      this.dropped++;
      if (this.dropped === 1 || this.dropped % 1000 === 0) {
        this.options.log?.(`ledger: buffer full (${this.options.maxBuffered}); ${this.dropped} record(s) dropped so far`);
      }
      return;
    }
    if (this.closed) {
      // After shutdown's flush nothing would write it: say so instead of losing it silently.
      this.dropped++;
      this.options.log?.(`ledger: record ${record.requestId} arrived after the ledger closed; not written`);
      return;
    }
    this.buffer.push(record);
    this.kick(this.nextDelay());
  }

  /** Writes everything buffered now; resolves when the buffer is empty (retrying as needed). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.buffer.length > 0 && !this.abandoned) {
      await this.flushOnce();
      if (this.buffer.length > 0 && this.backoffMs > 0 && !this.abandoned) await sleep(this.backoffMs);
    }
  }

  /** Stops the background timer and flushes, giving up (and saying how many) after `timeoutMs`. */
  async close(timeoutMs = 10_000): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const done = this.flush();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((r) => {
      timer = setTimeout(() => r('timeout'), timeoutMs);
    });
    const result = await Promise.race([done.then(() => 'done' as const), timeout]);
    clearTimeout(timer);
    if (result === 'timeout') {
      // Stop the retry loop too: left running it would keep a stopped gateway's process alive.
      this.abandoned = true;
      this.options.log?.(`ledger: ${this.buffer.length} record(s) could not be written before shutdown`);
    }
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
    // A batch in flight schedules the next one when it settles.
    if (this.flushing) return;
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
    const batch = this.buffer.slice(0, this.options.batchSize);
    if (batch.length === 0) return;
    try {
      await this.sink.insert(batch);
      // Only now are they safe: remove exactly what was written (new records may have arrived).
      this.buffer.splice(0, batch.length);
      this.backoffMs = 0;
    } catch (err) {
      this.failures++;
      this.backoffMs = Math.min(this.backoffMs ? this.backoffMs * 2 : 100, 5_000);
      this.options.log?.(`ledger: write of ${batch.length} record(s) failed, retrying in ${this.backoffMs} ms: ${(err as Error).message}`);
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

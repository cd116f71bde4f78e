import { type Kysely, sql } from 'kysely';
import { describeStoreError } from './classify-store-error.ts';
import type { Database } from './database.ts';
import { storableText, TEXT_CAPS } from './sanitize-record.ts';

/** One minute of one reason on one surface. */
export interface RejectionRow {
  /** Epoch ms of the window's start (a multiple of WINDOW_MS). */
  windowStart: number;
  surface: string;
  code: string;
  count: number;
}

export interface RejectionSink {
  add(rows: readonly RejectionRow[]): Promise<void>;
}

export const WINDOW_MS = 60_000;

/** The `rejections` table: each write adds its counts to the window's row (an upsert). */
export class RejectionStore implements RejectionSink {
  private readonly db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async add(rows: readonly RejectionRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db
      .insertInto('rejections')
      .values(rows.map((r) => ({ window_start: r.windowStart, surface: r.surface, code: r.code, count: r.count })))
      .onConflict((oc) =>
        oc.columns(['window_start', 'surface', 'code']).doUpdateSet({ count: sql<number>`rejections.count + excluded.count` }),
      )
      .execute();
  }

  /** Windows from `since` (epoch ms) on, oldest first. */
  async list(since = 0): Promise<RejectionRow[]> {
    const rows = await this.db
      .selectFrom('rejections')
      .selectAll()
      .where('window_start', '>=', since)
      .orderBy('window_start')
      .orderBy('surface')
      .orderBy('code')
      .execute();
    return rows.map((r) => ({ windowStart: Number(r.window_start), surface: r.surface, code: r.code, count: Number(r.count) }));
  }
}

export interface RejectionCounterOptions {
  /** How often counts go to the store (each write is one upsert per window, reason and surface). */
  flushIntervalMs: number;
  /** Distinct (window, surface, code) held while the store is down; past it counts are dropped, loudly. */
  maxKeys?: number;
  log?: (message: string) => void;
  now?: () => number;
}

/**
 * Requests refused at the door (authentication) are counted here instead of getting a ledger
 * row each: 2,000 anonymous requests a second are one row per minute and reason, not 2,000 rows.
 * `count` is a Map update, nothing more. Counts go to the store every flushIntervalMs; when the
 * store is down they stay in memory (bounded by maxKeys) and go with the next write.
 * A write that fails ambiguously (a timeout after the database committed) is retried, so a
 * window's count may then be too high, never too low.
 */
export class RejectionCounter {
  private readonly options: RejectionCounterOptions;
  private readonly now: () => number;
  private sink: RejectionSink | undefined;
  private counts = new Map<string, RejectionRow>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private dropped = 0;
  private failing = false;

  constructor(sink: RejectionSink | undefined, options: RejectionCounterOptions) {
    this.sink = sink;
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  /** Counts one refused request. `surface`: 'chat', 'responses', ...; `code`: the error code sent. */
  count(surface: string, code: string): void {
    const now = this.now();
    const windowStart = now - (now % WINDOW_MS);
    const key = `${windowStart}\n${surface}\n${code}`;
    const row = this.counts.get(key);
    if (row) {
      row.count++;
    } else if (this.counts.size >= (this.options.maxKeys ?? 10_000)) {
      if (this.dropped++ === 0)
        this.options.log?.(`ledger: rejection counts: ${this.counts.size} windows waiting for the store; new ones dropped`);
      return;
    } else {
      this.counts.set(key, {
        windowStart,
        surface: storableText(surface, TEXT_CAPS.label),
        code: storableText(code, TEXT_CAPS.name),
        count: 1,
      });
    }
    this.schedule();
  }

  /** Counts not yet in the store. */
  get pending(): number {
    let n = 0;
    for (const row of this.counts.values()) n += row.count;
    return n;
  }

  /** The store is open: counts go to it from now on. */
  attach(sink: RejectionSink): void {
    this.sink = sink;
    this.schedule();
  }

  /** Writes what is counted (waiting for a write in flight first). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
    if (this.counts.size === 0 || !this.sink) return;
    const sink = this.sink;
    const taken = this.counts;
    this.counts = new Map();
    this.writing = sink
      .add([...taken.values()])
      .then(
        () => {
          if (this.failing) this.options.log?.('ledger: rejection counts written again');
          this.failing = false;
        },
        (err: unknown) => {
          // Back into the map, added to what arrived meanwhile; said once per outage.
          for (const [key, row] of taken) this.merge(key, row);
          if (!this.failing)
            this.options.log?.(`ledger: rejection counts not written, kept in memory: ${describeStoreError(err)}`);
          this.failing = true;
          this.schedule();
        },
      )
      .finally(() => {
        this.writing = undefined;
      });
    await this.writing;
  }

  /** Writes what is left, for at most `timeoutMs`. */
  async close(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.flush(), new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
    clearTimeout(this.timer);
    this.timer = undefined;
    this.sink = undefined;
  }

  private merge(key: string, row: RejectionRow): void {
    const existing = this.counts.get(key);
    if (existing) existing.count += row.count;
    else this.counts.set(key, row);
  }

  private schedule(): void {
    if (this.timer || !this.sink || this.counts.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.options.flushIntervalMs);
    this.timer.unref();
  }
}

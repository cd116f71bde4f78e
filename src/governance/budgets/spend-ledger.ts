import { type BudgetWindow, NANOS_PER_USD, toNanos } from './budget-windows.ts';
import type { SpendIncrement, SpendStore } from './spend-store.ts';

export interface SpendLedgerOptions {
  /** Settled spend is written to the store in batches this often. */
  flushMs: number;
  /** The store's totals (other instances' spend) are read again this often, for windows in use. */
  refreshMs: number;
  log: (message: string) => void;
  now?: () => number;
}

/** What this instance knows of one window's spend, in nano-dollars. */
interface WindowSpend {
  window: BudgetWindow;
  /** The store's total at the last read. */
  stored: number;
  /** Written by this instance since that read (already in the store, not in `stored`). */
  committed: number;
  /** Being written now. */
  writing: number;
  /** Settled here, not written yet. */
  pending: number;
  loading: Promise<void> | undefined;
  loaded: boolean;
  lastUsed: number;
}

/** Windows unused this long are forgotten (and read again from the store if they come back). */
const IDLE_MS = 10 * 60_000;

/**
 * The spend of budget windows, kept in the store (embedded SQLite or PostgreSQL) so that every
 * instance and every restart sees it. Settlements are summed per window in memory and written in
 * one upsert per flush (a request never waits on the store to end); the totals of the windows in
 * use are read back every refreshMs, which is how an instance without Redis learns what the
 * others spent. What this instance knows at any moment is the last read plus its own spend since,
 * counted exactly once: flushes and reads run one after the other in one loop, and a read resets
 * only what was committed before it started.
 */
export class SpendLedger {
  private store: SpendStore | undefined;
  private readonly windows = new Map<string, WindowSpend>();
  private readonly options: SpendLedgerOptions;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private lastRefresh = 0;
  private failing = false;

  constructor(options: SpendLedgerOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  /** The store is open: spend is written and read from now on (windows seen before are read again). */
  attach(store: SpendStore): void {
    this.store = store;
    for (const w of this.windows.values()) w.loaded = false;
    this.timer ??= setInterval(() => void this.tick(), this.options.flushMs);
    this.timer.unref();
  }

  /** The window's spend as this instance knows it: immediate once the window was read from the store. */
  spent(window: BudgetWindow): number | Promise<number> {
    const w = this.entry(window);
    if (w.loaded || !this.store) return total(w);
    w.loading ??= this.load(w);
    return w.loading.then(() => total(w));
  }

  /** What the store holds plus this instance's spend not written yet: the value a shared book starts from. */
  async seed(window: BudgetWindow): Promise<number> {
    const w = this.entry(window);
    if (!this.store) return w.pending + w.writing;
    const stored = (await this.store.spent([window.id])).get(window.id) ?? 0;
    return toNanos(stored) + w.pending + w.writing;
  }

  add(window: BudgetWindow, nanos: number): void {
    if (nanos <= 0) return;
    this.entry(window).pending += nanos;
  }

  /** Writes what is pending (at shutdown), within the store's own timeouts. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
    await this.flush();
  }

  /** One flush, then (every refreshMs) one read: never at the same time. */
  tick(): Promise<void> {
    this.ticking ??= (async () => {
      try {
        await this.flush();
        if (this.now() - this.lastRefresh >= this.options.refreshMs) await this.refresh();
      } finally {
        this.ticking = undefined;
      }
    })();
    return this.ticking;
  }

  private entry(window: BudgetWindow): WindowSpend {
    let w = this.windows.get(window.id);
    if (!w) {
      w = { window, stored: 0, committed: 0, writing: 0, pending: 0, loading: undefined, loaded: false, lastUsed: 0 };
      this.windows.set(window.id, w);
    }
    w.lastUsed = this.now();
    return w;
  }

  private async load(w: WindowSpend): Promise<void> {
    try {
      const stored = (await this.store?.spent([w.window.id]))?.get(w.window.id) ?? 0;
      // Nothing of this instance was written for a window not read yet, so the read is the whole past.
      w.stored = toNanos(stored);
      w.committed = 0;
      w.loaded = true;
    } catch (err) {
      this.options.log(
        `budgets: could not read the spend of ${w.window.id}: ${(err as Error).message}; using what this instance knows`,
      );
    } finally {
      w.loading = undefined;
    }
  }

  private async flush(): Promise<void> {
    const store = this.store;
    if (!store) return;
    const batch: WindowSpend[] = [];
    for (const w of this.windows.values()) {
      if (w.pending > 0 && w.writing === 0) {
        w.writing = w.pending;
        w.pending = 0;
        batch.push(w);
      }
    }
    if (batch.length === 0) return;
    const increments: SpendIncrement[] = batch.map((w) => ({
      windowId: w.window.id,
      subject: w.window.subject,
      period: w.window.period,
      start: w.window.start,
      usd: w.writing / NANOS_PER_USD,
    }));
    try {
      await store.add(increments, this.now());
      for (const w of batch) {
        w.committed += w.writing;
        w.writing = 0;
      }
      if (this.failing) this.options.log('budgets: spend is written to the store again');
      this.failing = false;
    } catch (err) {
      for (const w of batch) {
        w.pending += w.writing;
        w.writing = 0;
      }
      if (!this.failing)
        this.options.log(`budgets: could not write spend to the store (kept, retried): ${(err as Error).message}`);
      this.failing = true;
    }
  }

  private async refresh(): Promise<void> {
    const store = this.store;
    if (!store) return;
    const now = this.now();
    this.lastRefresh = now;
    const ids: string[] = [];
    for (const [id, w] of this.windows) {
      const idle = now - w.lastUsed > IDLE_MS && w.pending === 0 && w.writing === 0;
      if (idle || w.window.end + IDLE_MS < now) this.windows.delete(id);
      else if (w.loaded) ids.push(id);
    }
    if (ids.length === 0) return;
    try {
      const totals = await store.spent(ids);
      for (const id of ids) {
        const w = this.windows.get(id);
        if (!w) continue;
        w.stored = toNanos(totals.get(id) ?? 0);
        w.committed = 0;
      }
    } catch (err) {
      this.options.log(`budgets: could not read spend from the store: ${(err as Error).message}`);
    }
  }
}

function total(w: WindowSpend): number {
  return w.stored + w.committed + w.writing + w.pending;
}

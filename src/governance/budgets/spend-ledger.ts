import type { BudgetSpend } from '../../accounting/ledger-record.ts';
import { type BudgetWindow, toNanos } from './budget-windows.ts';
import type { SpendStore } from './spend-store.ts';

export interface SpendLedgerOptions {
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
  /** Settled here, its ledger rows not written yet. */
  pending: number;
  loading: Promise<void> | undefined;
  loaded: boolean;
  lastUsed: number;
}

/** Windows unused this long are forgotten (and read again from the store if they come back). */
const IDLE_MS = 10 * 60_000;

/**
 * What this instance knows of the spend of budget windows, kept in the store (embedded SQLite or
 * PostgreSQL) so that every instance and every restart sees it. A settled request's cost travels
 * with its ledger record (LedgerRecord.budgetSpend) and is written in the same transaction as
 * the row, so a crash loses a row and its spend together or neither; until the ledger writer
 * says it is written (`written`), it is counted here as pending. The totals of the windows in use
 * are read back every refreshMs, which is how an instance without Redis learns what the others
 * spent. What this instance knows is the last read plus its own spend since: a read resets only
 * what was written before it started (a batch written while the read runs may be counted twice
 * until the next read: too much, never too little).
 */
export class SpendLedger {
  private store: SpendStore | undefined;
  private readonly windows = new Map<string, WindowSpend>();
  private readonly options: SpendLedgerOptions;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;

  constructor(options: SpendLedgerOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  /** The store is open: spend is read from now on (windows seen before are read again). */
  attach(store: SpendStore): void {
    this.store = store;
    for (const w of this.windows.values()) w.loaded = false;
    this.timer ??= setInterval(() => void this.tick(), this.options.refreshMs);
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
    if (!this.store) return w.pending;
    const stored = (await this.store.spent([window.id])).get(window.id) ?? 0;
    return toNanos(stored) + w.pending;
  }

  /** A request settled: its cost counts here at once, and reaches the store with its ledger row. */
  add(window: BudgetWindow, nanos: number): void {
    if (nanos <= 0) return;
    this.entry(window).pending += nanos;
  }

  /** The ledger writer stored these records' spend (with their rows): no longer pending. */
  written(spend: readonly BudgetSpend[]): void {
    for (const s of spend) {
      const w = this.windows.get(s.windowId);
      if (!w) continue;
      // A record replayed from the journal was never pending here.
      const nanos = Math.min(w.pending, toNanos(s.usd));
      w.pending -= nanos;
      w.committed += nanos;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
  }

  /** One read of the windows in use (one at a time). */
  tick(): Promise<void> {
    this.ticking ??= this.refresh().finally(() => {
      this.ticking = undefined;
    });
    return this.ticking;
  }

  private entry(window: BudgetWindow): WindowSpend {
    let w = this.windows.get(window.id);
    if (!w) {
      w = { window, stored: 0, committed: 0, pending: 0, loading: undefined, loaded: false, lastUsed: 0 };
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

  private async refresh(): Promise<void> {
    const store = this.store;
    if (!store) return;
    const now = this.now();
    const ids: string[] = [];
    for (const [id, w] of this.windows) {
      const idle = now - w.lastUsed > IDLE_MS && w.pending === 0;
      if (idle || w.window.end + IDLE_MS < now) this.windows.delete(id);
      else if (w.loaded) ids.push(id);
    }
    if (ids.length === 0) return;
    // Written before the read started: in what it returns.
    const before = new Map(ids.map((id) => [id, this.windows.get(id)?.committed ?? 0]));
    try {
      const totals = await store.spent(ids);
      for (const id of ids) {
        const w = this.windows.get(id);
        if (!w) continue;
        w.stored = toNanos(totals.get(id) ?? 0);
        w.committed -= before.get(id) ?? 0;
      }
    } catch (err) {
      this.options.log(`budgets: could not read spend from the store: ${(err as Error).message}`);
    }
  }
}

function total(w: WindowSpend): number {
  return w.stored + w.committed + w.pending;
}

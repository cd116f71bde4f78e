import type { BudgetWindow } from './budget-windows.ts';
import type { SpendLedger } from './spend-ledger.ts';

export type ReserveOutcome =
  /** Reserved in every window: what was asked, or less when a window had less room. */
  | { ok: true; granted: number }
  /** A window had less room than the minimum: nothing was reserved. */
  | { ok: false; window: BudgetWindow; spentNanos: number; reservedNanos: number };

/**
 * Spend and reservations of budget windows, in nano-dollars. A request reserves before it is
 * sent, may extend its reservation while it streams, and settles once: its reservation is
 * released and its real cost added to the spend. A reservation carries an expiry (its request's
 * deadline and a margin), so one whose instance died is released on its own.
 */
export interface BudgetBook {
  /**
   * Reserves `want` in every window if each has at least `min` of room left after its spend and
   * the other live reservations; grants less than `want` when that is all there is.
   */
  reserve(windows: readonly BudgetWindow[], id: string, want: number, min: number, ttlMs: number): Promise<ReserveOutcome>;
  /** Adds up to `want` to a reservation (0 when there is no room left). */
  extend(windows: readonly BudgetWindow[], id: string, want: number, ttlMs: number): Promise<number>;
  /** Releases the reservation and adds `costNanos` to the spend (here and in the store). */
  settle(windows: readonly BudgetWindow[], id: string, costNanos: number): void;
  /**
   * What a reserve of these windows must first read from the store, if anything: the admission
   * waits for it before it sends any command, so that they all leave in one write.
   */
  ready?(windows: readonly BudgetWindow[]): Promise<void> | undefined;
}

interface Held {
  nanos: number;
  expiresAt: number;
}

interface WindowHolds {
  total: number;
  holds: Map<string, Held>;
  /** The earliest expiry among the holds: the map is only scanned once it has passed. */
  nextExpiry: number;
}

/**
 * One process's book: reservations in memory, spend from the SpendLedger (the store, refreshed).
 * Without Redis every instance reserves on its own: budgets then hold per instance against the
 * spend all of them have written (docs/operations/scale-out.md).
 */
export class MemoryBudgetBook implements BudgetBook {
  private readonly spend: SpendLedger;
  private readonly holds = new Map<string, WindowHolds>();
  private readonly now: () => number;

  constructor(spend: SpendLedger, now: () => number = Date.now) {
    this.spend = spend;
    this.now = now;
  }

  async reserve(windows: readonly BudgetWindow[], id: string, want: number, min: number, ttlMs: number): Promise<ReserveOutcome> {
    const spent = await this.spentOf(windows);
    let grant = want;
    for (let i = 0; i < windows.length; i++) {
      const held = this.live(windows[i].id);
      const room = windows[i].limitNanos - spent[i] - held.total;
      if (room < min) return { ok: false, window: windows[i], spentNanos: spent[i], reservedNanos: held.total };
      if (room < grant) grant = room;
    }
    grant = Math.max(0, Math.floor(grant));
    this.hold(windows, id, grant, ttlMs);
    return { ok: true, granted: grant };
  }

  async extend(windows: readonly BudgetWindow[], id: string, want: number, ttlMs: number): Promise<number> {
    const outcome = await this.reserve(windows, id, want, 0, ttlMs);
    return outcome.ok ? outcome.granted : 0;
  }

  settle(windows: readonly BudgetWindow[], id: string, costNanos: number): void {
    for (const w of windows) {
      const held = this.holds.get(w.id);
      const mine = held?.holds.get(id);
      if (held && mine) {
        held.total -= mine.nanos;
        held.holds.delete(id);
        if (held.holds.size === 0) this.holds.delete(w.id);
      }
      this.spend.add(w, costNanos);
    }
  }

  /**
   * Holds a reservation made elsewhere: requests admitted through Redis still in flight when this
   * instance fell back to its own book (admit.ts), so that their room is not granted twice.
   * Released by settle(windows, id, 0), which adds no spend.
   */
  adopt(windows: readonly BudgetWindow[], id: string, nanos: number, ttlMs: number): void {
    this.hold(windows, id, nanos, ttlMs);
  }

  private spentOf(windows: readonly BudgetWindow[]): Promise<number[]> | number[] {
    const values = windows.map((w) => this.spend.spent(w));
    return values.some((v) => typeof v !== 'number') ? Promise.all(values.map((v) => Promise.resolve(v))) : (values as number[]);
  }

  private hold(windows: readonly BudgetWindow[], id: string, nanos: number, ttlMs: number): void {
    const expiresAt = this.now() + ttlMs;
    for (const w of windows) {
      let held = this.holds.get(w.id);
      if (!held) {
        held = { total: 0, holds: new Map(), nextExpiry: expiresAt };
        this.holds.set(w.id, held);
      }
      const mine = held.holds.get(id);
      if (mine) {
        mine.nanos += nanos;
        mine.expiresAt = expiresAt;
      } else held.holds.set(id, { nanos, expiresAt });
      held.total += nanos;
      held.nextExpiry = Math.min(held.nextExpiry, expiresAt);
    }
  }

  /** A window's holds with the expired ones (a request that never settled) dropped. */
  private live(windowId: string): WindowHolds {
    const held = this.holds.get(windowId);
    if (!held) return EMPTY;
    const now = this.now();
    if (now < held.nextExpiry) return held;
    let next = Infinity;
    for (const [id, h] of held.holds) {
      if (h.expiresAt <= now) {
        held.total -= h.nanos;
        held.holds.delete(id);
      } else next = Math.min(next, h.expiresAt);
    }
    held.nextExpiry = next;
    return held;
  }
}

const EMPTY: WindowHolds = Object.freeze({ total: 0, holds: new Map<string, Held>(), nextExpiry: Infinity }) as WindowHolds;

import type { BudgetBook } from './budgets/budget-book.ts';
import type { BudgetWindow } from './budgets/budget-windows.ts';
import type { SlotClaim } from './limits/concurrency-slots.ts';

/** What an admission made through Redis holds there until it settles. */
export interface SharedHold {
  claims: readonly SlotClaim[];
  windows: readonly BudgetWindow[] | undefined;
  /** The reservation now (a stream's grows as it extends it). */
  reserved: () => number;
  ttlMs: number;
}

/** The books an instance falls back to, as far as adopting goes. */
export interface AdoptingBooks {
  slots: { adopt(claims: readonly SlotClaim[]): void; release(claims: readonly SlotClaim[], requestId: string): void };
  book: Pick<BudgetBook, 'settle'> & { adopt(windows: readonly BudgetWindow[], id: string, nanos: number, ttlMs: number): void };
}

/**
 * The admissions of this instance that hold slots or reservations in Redis, until they settle.
 * When Redis goes away the instance's own books take over, and they start empty: without these,
 * the requests still in flight would have their slots and budget granted a second time. So the
 * own books adopt them (counted as taken, whatever the limit) and give them back when they
 * settle. Per admission, a Map entry added and deleted: the only cost while Redis is healthy.
 */
export class SharedAdmissions {
  private readonly live = new Map<string, SharedHold & { adopted: boolean }>();

  add(requestId: string, hold: SharedHold): void {
    this.live.set(requestId, { ...hold, adopted: false });
  }

  /** The admission settled: what the own books adopted of it is given back there. */
  settled(requestId: string, local: AdoptingBooks): void {
    const held = this.live.get(requestId);
    if (!held) return;
    this.live.delete(requestId);
    if (!held.adopted) return;
    if (held.claims.length > 0) local.slots.release(held.claims, requestId);
    if (held.windows) local.book.settle(held.windows, requestId, 0);
  }

  /** Redis went away: the own books count what is in flight through it. */
  adoptInto(local: AdoptingBooks): void {
    for (const [requestId, held] of this.live) {
      if (held.adopted) continue;
      held.adopted = true;
      if (held.claims.length > 0) local.slots.adopt(held.claims);
      if (held.windows) local.book.adopt(held.windows, requestId, held.reserved(), held.ttlMs);
    }
  }
}

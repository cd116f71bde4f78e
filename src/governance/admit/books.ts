import type { RedisLink } from '../../store/redis-link.ts';
import type { RedisEvents } from '../../telemetry/metrics.ts';
import type { BudgetBook, MemoryBudgetBook } from '../budgets/budget-book.ts';
import type { BudgetWindow } from '../budgets/budget-windows.ts';
import type { ConcurrencySlots, MemorySlots } from '../limits/concurrency-slots.ts';
import type { MemoryRateBuckets, RateBuckets, RateSettlement } from '../limits/rate-buckets.ts';

/** Where an admission's limits and budget are kept: in Redis for every instance, or in this one's memory. */
export interface Books {
  rates: RateBuckets;
  slots: ConcurrencySlots;
  book: BudgetBook;
  /** What a running stream extends its reservation in: with Redis, within its timeout, as admissions. */
  extending: Pick<BudgetBook, 'extend'>;
  shared: boolean;
}

export interface LocalBooks extends Books {
  rates: MemoryRateBuckets;
  slots: MemorySlots;
  book: MemoryBudgetBook;
  shared: false;
}

/**
 * What checking and settling an admission reach besides its plan: this instance's books, Redis's
 * while it answers, and the few steps that depend on which. Built once by LimitsAndBudgets.
 */
export interface Bookkeeping {
  /** This instance's own books: the only ones without Redis, the fallback while it is away. */
  local: LocalBooks;
  link: Pick<RedisLink, 'available' | 'run'> | undefined;
  /** The shared books on the current Redis connection; undefined while Redis is away. */
  shared(): Books | undefined;
  /** Counted in /metrics: each request decided without Redis (by its tier's policy). */
  events: RedisEvents | undefined;
  /** Charges given back or reconciled with the real usage, in the books they were taken from. */
  reconcileRates(books: Books, settlements: RateSettlement[]): void;
  /** A reservation turned into its real cost, in the books it was taken from. */
  settleBudget(books: Books, windows: readonly BudgetWindow[], requestId: string, cost: number): void;
  /** An admission made through Redis settled: what the own books adopted of it is given back. */
  settledShared(requestId: string): void;
}

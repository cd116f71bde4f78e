import { errors } from '../../errors/catalog.ts';
import { RedisUnavailable } from '../../store/redis-link.ts';
import type { ReserveOutcome } from '../budgets/budget-book.ts';
import type { SlotOutcome } from '../limits/concurrency-slots.ts';
import type { RateOutcome } from '../limits/rate-buckets.ts';
import type { TierPolicy } from '../limits/tier-policy.ts';
import type { Bookkeeping, Books } from './books.ts';
import type { Plan } from './plan-charges.ts';

/** What each limit and the budget answered: undefined where the plan asks nothing of it. */
export interface Checked {
  rates: RateOutcome | undefined;
  slots: SlotOutcome | undefined;
  budget: ReserveOutcome | undefined;
}

/**
 * The check on the shared books while Redis answers, else on this instance's own (fail_open)
 * or none (fail_closed: 503). Redis's timeout counts Redis alone: a budget window's first
 * spend is read from the store before (that read once waited for the store's pool inside it,
 * and a burst on two instances timed out against a healthy Redis: issue 25).
 */
export async function checkSomewhere(
  plan: Plan,
  requestId: string,
  now: number,
  tier: TierPolicy | undefined,
  keeping: Bookkeeping,
): Promise<{ books: Books; checked: Checked }> {
  const link = keeping.link;
  if (!link) return { books: keeping.local, checked: await checkCharges(plan, requestId, now, keeping.local, keeping) };
  const shared = link.available() ? keeping.shared() : undefined;
  const reading = shared ? spendRead(shared, plan) : undefined;
  // A window's spend the store could not give cannot be checked in Redis either: as if Redis were away.
  if (shared && (reading === undefined || (await reading))) {
    try {
      return { books: shared, checked: await link.run(() => checkCharges(plan, requestId, now, shared, keeping)) };
    } catch (err) {
      if (!(err instanceof RedisUnavailable)) throw err;
    }
  }
  keeping.events?.decidedLocally(tier?.redisUnavailable ?? 'fail_open');
  if (tier?.redisUnavailable === 'fail_closed') throw errors.limitsUnavailable();
  return { books: keeping.local, checked: await checkCharges(plan, requestId, now, keeping.local, keeping) };
}

const READ = (): boolean => true;
const UNREAD = (): boolean => false;

/** Whether the store gave the budget windows' spend these books must read first; undefined: nothing to read. */
function spendRead(books: Books, plan: Plan): Promise<boolean> | undefined {
  const readying = plan.budget ? books.book.ready?.(plan.budget.windows) : undefined;
  return readying?.then(READ, UNREAD);
}

/** Every limit and the budget at once; what one refused is given back by the others. */
export async function checkCharges(
  plan: Plan,
  requestId: string,
  now: number,
  books: Books,
  keeping: Pick<Bookkeeping, 'reconcileRates'>,
): Promise<Checked> {
  // Issued in one tick: with Redis, every command of the admission leaves in one write.
  const rates = plan.charges.length > 0 ? books.rates.consume(plan.charges, now) : undefined;
  const slots = plan.claims.length > 0 ? books.slots.acquire(plan.claims, requestId, plan.holdMs) : undefined;
  const budget = plan.budget
    ? books.book.reserve(plan.budget.windows, requestId, plan.budget.want, plan.budget.min, plan.holdMs)
    : undefined;
  const [r, s, b] = await Promise.allSettled([rates, slots, budget]);
  const checked: Checked = { rates: valueOf(r), slots: valueOf(s), budget: valueOf(b) };
  const failed = r.status === 'rejected' ? r : s.status === 'rejected' ? s : b.status === 'rejected' ? b : undefined;
  if (failed || refused(checked)) {
    giveBack(plan, requestId, now, books, checked, keeping);
    // With Redis, the link turns any failure into RedisUnavailable (the tier's policy applies).
    if (failed) throw failed.reason;
  }
  return checked;
}

function valueOf<T>(settled: PromiseSettledResult<T>): T | undefined {
  return settled.status === 'fulfilled' ? settled.value : undefined;
}

function refused(checked: Checked): boolean {
  return checked.rates?.ok === false || checked.slots?.ok === false || checked.budget?.ok === false;
}

/** Gives back what was taken (the rate buckets take nothing when one of them refuses). */
function giveBack(
  plan: Plan,
  requestId: string,
  now: number,
  books: Books,
  checked: Checked,
  keeping: Pick<Bookkeeping, 'reconcileRates'>,
): void {
  if (checked.rates?.ok)
    keeping.reconcileRates(
      books,
      plan.charges.map((charge) => ({ charge, used: 0, chargedAt: now })),
    );
  if (checked.slots?.ok) books.slots.release(plan.claims, requestId);
  if (plan.budget && checked.budget?.ok) books.book.settle(plan.budget.windows, requestId, 0);
}

import type { RequestHolds } from '../../accounting/journal-entries.ts';
import type { BudgetSpend, LedgerRecord } from '../../accounting/ledger-record.ts';
import { type BudgetWindow, NANOS_PER_USD, toNanos } from '../budgets/budget-windows.ts';
import type { RateSettlement } from '../limits/rate-buckets.ts';
import type { TierPolicy } from '../limits/tier-policy.ts';
import type { Bookkeeping, Books } from './books.ts';
import type { Plan } from './plan-charges.ts';

/** What an admitted request holds until it settles, and where. */
export interface Admitted {
  requestId: string;
  plan: Plan;
  tier: TierPolicy | undefined;
  books: Books;
  /** When it was admitted: its token charges are reconciled as of then. */
  at: number;
  /** A stream's budget guard (BudgetGuard): `stopped` once its budget ended it. */
  guard: { readonly stopped: boolean } | undefined;
  /** A non-streamed answer whose output limit was lowered to what its reservation pays for. */
  capped: boolean;
}

/**
 * Settles an admission with its request's final record: gives back its slots, reconciles its
 * token charges with the real usage and turns its reservation into the real cost. Returns the
 * record to write instead when it amends it: its budget spend (stored with the row, in its
 * transaction), a voided abandoned stream (costs 0), an answer its budget ended (budget_exhausted).
 */
export function settleAdmission(
  admitted: Admitted,
  record: LedgerRecord,
  keeping: Pick<Bookkeeping, 'reconcileRates' | 'settleBudget' | 'settledShared'>,
): LedgerRecord | void {
  const { plan, requestId, books } = admitted;
  if (plan.claims.length > 0) books.slots.release(plan.claims, requestId);
  reconcileTokens(admitted, record.inputTokens + record.outputTokens, keeping);
  const voided = admitted.tier?.abandoned === 'void' && record.outcome === 'cancelled';
  const cost = voided ? 0 : toNanos(record.costUsd);
  if (plan.budget) keeping.settleBudget(books, plan.budget.windows, requestId, cost);
  if (books.shared) keeping.settledShared(requestId);
  // The budget ended the answer: a stream it stopped, or a non-streamed one that ran into its cap.
  const budgetEnded = admitted.guard?.stopped === true || (admitted.capped && record.finishReason === 'length');
  return amended(record, voided, budgetEnded, cost > 0 ? plan.budget?.windows : undefined, cost);
}

/** The per-minute token charges that the prompt's estimate got wrong, reconciled with the tokens used. */
function reconcileTokens(admitted: Admitted, used: number, keeping: Pick<Bookkeeping, 'reconcileRates'>): void {
  let settlements: RateSettlement[] | undefined;
  for (const charge of admitted.plan.charges) {
    if (charge.kind !== 'tokens' || charge.points === used) continue;
    (settlements ??= []).push({ charge, used, chargedAt: admitted.at });
  }
  if (settlements) keeping.reconcileRates(admitted.books, settlements);
}

/** The record amended, or nothing when it stands as it is. */
function amended(
  record: LedgerRecord,
  voided: boolean,
  budgetEnded: boolean,
  spentIn: readonly BudgetWindow[] | undefined,
  cost: number,
): LedgerRecord | void {
  if (!voided && !budgetEnded && !spentIn) return;
  const amended: LedgerRecord = { ...record };
  // The reservation is released by now; the spend is stored with the row, in its transaction.
  if (spentIn) amended.budgetSpend = spentIn.map((w) => spendOf(w, cost));
  if (voided) {
    amended.costUsd = 0;
    amended.billing = 'void';
  }
  if (budgetEnded) amended.finishReason = 'budget_exhausted';
  return amended;
}

/**
 * A request that was running when sluice stopped without a drain, recorded at the next start
 * from the durable journal (pipeline/record-interrupted.ts): what it held is given back and its
 * cost charged, as its settle would have. In Redis its slots and its reservation are released at
 * once (they would otherwise lapse only at their expiry, the deadline plus a minute); in memory a
 * new process holds neither (and MemorySlots counts per subject: a release would free a live
 * request's slot), so only the spend is added. The per-minute token charge is left as it was:
 * its minute is past. Returns the record with its spend, written in the row's transaction.
 */
export function settleInterrupted(
  holds: RequestHolds | undefined,
  record: LedgerRecord,
  keeping: Pick<Bookkeeping, 'local' | 'shared' | 'settleBudget'>,
): LedgerRecord {
  if (!holds) return record;
  // Redis away at recovery: its slots and reservation lapse at their expiry; the spend still counts.
  const shared = keeping.shared();
  if (shared && holds.slots && holds.slots.length > 0) shared.slots.release(holds.slots, record.requestId);
  const windows = holds.budget?.windows;
  if (!windows || windows.length === 0) return record;
  const cost = toNanos(record.costUsd);
  keeping.settleBudget(shared ?? keeping.local, windows, record.requestId, cost);
  return cost > 0 ? { ...record, budgetSpend: windows.map((w) => spendOf(w, cost)) } : record;
}

/** A window's share of the record's spend, as the ledger stores it. */
function spendOf(w: BudgetWindow, nanos: number): BudgetSpend {
  return { windowId: w.id, subject: w.subject, period: w.period, start: w.start, usd: nanos / NANOS_PER_USD };
}

import { interruptedRecord } from '../accounting/interrupted-record.ts';
import type { RequestHolds, UnfinishedRequest } from '../accounting/journal-entries.ts';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { PricingRegistry } from '../accounting/pricing.ts';

export interface InterruptedDeps {
  pricing: PricingRegistry;
  /** Which of these ids the store has a row for already. */
  storedIds(ids: readonly string[]): Promise<Set<string>>;
  /** Gives back what the request held in the limits and budgets; the record with its budget spend. */
  settle(holds: RequestHolds | undefined, record: LedgerRecord): LedgerRecord;
  /** Hands the record to the ledger (which journals it first: from then on the request is done). */
  write(record: LedgerRecord): void;
  /** The journal need not carry this request on: its row is in the store. */
  forget(requestId: string): void;
  log(message: string): void;
}

/**
 * The end of the lifecycle for requests a crash cut short (durable ledger mode): at start, each
 * request the journal saw admitted and never saw end gets its one row, outcome `interrupted`
 * (interrupted-record.ts), and what it held is settled. Exactly one row per request, however
 * often sluice restarts: a request whose row the store has already is skipped (its record was
 * written but its journal line lost, or an earlier start recorded it), and the record of one
 * recorded here is journaled as it is handed to the ledger, which ends it in the journal. Should
 * the store not answer, the records are written anyway: the insert skips a row already there,
 * and a settlement made twice only overstates a budget's spend in Redis, never understates it.
 */
export async function recordInterrupted(
  unfinished: readonly UnfinishedRequest[],
  deps: InterruptedDeps,
): Promise<LedgerRecord[]> {
  if (unfinished.length === 0) return [];
  let stored = new Set<string>();
  try {
    stored = await deps.storedIds(unfinished.map((u) => u.admitted.requestId));
  } catch (err) {
    deps.log(
      `ledger: could not look up which interrupted requests have a row already: ${(err as Error).message}; recording them all`,
    );
  }
  const written: LedgerRecord[] = [];
  for (const u of unfinished) {
    const { requestId } = u.admitted;
    if (stored.has(requestId)) {
      deps.forget(requestId);
      continue;
    }
    const record = deps.settle(u.admitted.holds, interruptedRecord(u, deps.pricing));
    deps.write(record);
    written.push(record);
  }
  if (written.length > 0 || stored.size > 0) {
    deps.log(
      `ledger: ${written.length} request(s) that were in progress when sluice stopped recorded as interrupted` +
        (stored.size > 0 ? ` (${stored.size} had their row already)` : ''),
    );
  }
  return written;
}

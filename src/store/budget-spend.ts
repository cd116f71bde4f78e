import { type Kysely, sql } from 'kysely';
import type { BudgetSpend } from '../accounting/ledger-record.ts';
import type { Database } from './database.ts';

/** Spend per budget window (migration 0006), the durable truth every instance reads. */
export interface BudgetSpendTable {
  /** BudgetWindow.id: `key:k1:day:2026-11-24`. */
  window_id: string;
  subject: string;
  period: string;
  window_start: number;
  spent_usd: number;
  updated_at: number;
}

export type SpendDatabase = Database & { budget_spend: BudgetSpendTable };

/**
 * Adds each window's increment to its row (created at the first), in one statement: on the
 * ledger's connection or inside its batch's transaction. Increments of one window are summed
 * first, since one upsert may not touch a row twice.
 */
export async function addSpend(db: Kysely<Database>, increments: readonly BudgetSpend[], now: number): Promise<void> {
  const byWindow = new Map<string, BudgetSpend>();
  for (const i of increments) {
    if (!(i.usd > 0)) continue;
    const seen = byWindow.get(i.windowId);
    if (seen) seen.usd += i.usd;
    else byWindow.set(i.windowId, { ...i });
  }
  if (byWindow.size === 0) return;
  await (db as unknown as Kysely<SpendDatabase>)
    .insertInto('budget_spend')
    .values(
      [...byWindow.values()].map((i) => ({
        window_id: i.windowId,
        subject: i.subject,
        period: i.period,
        window_start: i.start,
        spent_usd: i.usd,
        updated_at: now,
      })),
    )
    .onConflict((oc) =>
      oc.column('window_id').doUpdateSet({
        spent_usd: sql<number>`budget_spend.spent_usd + excluded.spent_usd`,
        updated_at: sql<number>`excluded.updated_at`,
      }),
    )
    .execute();
}

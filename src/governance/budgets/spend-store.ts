import { type Kysely, sql } from 'kysely';
import type { Database } from '../../store/database.ts';

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

type SpendDatabase = Database & { budget_spend: BudgetSpendTable };

export interface SpendIncrement {
  windowId: string;
  subject: string;
  period: string;
  start: number;
  usd: number;
}

/** The budget_spend table over either engine (the ledger's Kysely instance). */
export class SpendStore {
  private readonly db: Kysely<SpendDatabase>;

  constructor(db: Kysely<Database>) {
    this.db = db as unknown as Kysely<SpendDatabase>;
  }

  /** Adds each increment to its window's row (created at the first): one statement, one transaction. */
  async add(increments: readonly SpendIncrement[], now = Date.now()): Promise<void> {
    if (increments.length === 0) return;
    await this.db
      .insertInto('budget_spend')
      .values(
        increments.map((i) => ({
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

  /** The spend of each window (absent: nothing spent yet). */
  async spent(windowIds: readonly string[]): Promise<Map<string, number>> {
    const totals = new Map<string, number>();
    if (windowIds.length === 0) return totals;
    const rows = await this.db
      .selectFrom('budget_spend')
      .select(['window_id', 'spent_usd'])
      .where('window_id', 'in', [...windowIds])
      .execute();
    for (const row of rows) totals.set(row.window_id, Number(row.spent_usd));
    return totals;
  }
}

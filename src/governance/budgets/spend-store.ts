import type { Kysely } from 'kysely';
import type { Database } from '../../store/database.ts';
import type { SpendDatabase } from '../../store/budget-spend.ts';

/**
 * Reads the budget_spend table over either engine (the ledger's Kysely instance). Spend is
 * written by the ledger writer, in the transaction of the rows it belongs to (store/budget-spend.ts).
 */
export class SpendStore {
  private readonly db: Kysely<SpendDatabase>;

  constructor(db: Kysely<Database>) {
    this.db = db as unknown as Kysely<SpendDatabase>;
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

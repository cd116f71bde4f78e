import { type Kysely, sql } from 'kysely';
import type { Database } from '../store/database.ts';
import { BUCKET_BOUNDS_MS, type MinuteCell } from './minute-rollups.ts';

/** The histogram columns of ledger_minutes (migration 0012): one per bucket, the one past the last bound included. */
export const HISTOGRAM_COLUMNS = Array.from({ length: BUCKET_BOUNDS_MS.length + 1 }, (_, i) => i);
const ttftColumn = (i: number) => `ttft_${i}`;
const latencyColumn = (i: number) => `latency_${i}`;
const SUMMED = [
  'requests',
  'errors',
  'input_tokens',
  'output_tokens',
  'cost_usd',
  ...HISTOGRAM_COLUMNS.map(ttftColumn),
  ...HISTOGRAM_COLUMNS.map(latencyColumn),
];

type MinutesRow = Record<string, number | string>;
type MinutesDatabase = Database & { ledger_minutes: MinutesRow };

/**
 * The per-minute rollups in the store (ledger_minutes), shared by every process that writes the
 * ledger: each adds its stored batches' sums to the minute's row per provider/model, and the
 * charts read these rows, never the ledger itself.
 */
export class RollupStore {
  private readonly db: Kysely<MinutesDatabase>;

  constructor(db: Kysely<Database>) {
    this.db = db as unknown as Kysely<MinutesDatabase>;
  }

  /** Adds the cells to their rows (created at the first), in one statement. */
  async add(cells: readonly MinuteCell[]): Promise<void> {
    if (cells.length === 0) return;
    const update = Object.fromEntries(
      SUMMED.map((c) => [c, sql<number>`${sql.ref(`ledger_minutes.${c}`)} + ${sql.ref(`excluded.${c}`)}`]),
    );
    await this.db
      .insertInto('ledger_minutes')
      .values(cells.map(rowOf))
      .onConflict((oc) => oc.columns(['minute', 'provider', 'model']).doUpdateSet(update))
      .execute();
  }

  /** The rows of the minutes from `since` (epoch ms) on. */
  async since(since: number): Promise<MinuteCell[]> {
    const rows = await this.db.selectFrom('ledger_minutes').selectAll().where('minute', '>=', since).execute();
    return rows.map(cellOf);
  }
}

function rowOf(c: MinuteCell): MinutesRow {
  const row: MinutesRow = {
    minute: c.minute,
    provider: c.provider,
    model: c.model,
    requests: c.requests,
    errors: c.errors,
    input_tokens: c.inputTokens,
    output_tokens: c.outputTokens,
    cost_usd: c.costUsd,
  };
  for (const i of HISTOGRAM_COLUMNS) {
    row[ttftColumn(i)] = c.ttft[i];
    row[latencyColumn(i)] = c.latency[i];
  }
  return row;
}

function cellOf(row: MinutesRow): MinuteCell {
  const n = (column: string) => Number(row[column]);
  return {
    minute: n('minute'),
    provider: String(row.provider),
    model: String(row.model),
    requests: n('requests'),
    errors: n('errors'),
    inputTokens: n('input_tokens'),
    outputTokens: n('output_tokens'),
    costUsd: n('cost_usd'),
    ttft: HISTOGRAM_COLUMNS.map((i) => n(ttftColumn(i))),
    latency: HISTOGRAM_COLUMNS.map((i) => n(latencyColumn(i))),
  };
}

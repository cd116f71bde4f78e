import type { LedgerDayRow } from '../store/reconcile-store.ts';

/**
 * What both sides of a reconciliation are brought to: one row per UTC day and model (and, where
 * the provider's report gives it, per provider API key). Tokens in OpenAI's sense, as the ledger
 * keeps them: `input` includes the cached (cache-read) tokens and the cache writes.
 */
export interface ReportRow {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  model: string;
  input: number;
  cached: number;
  output: number;
  /** USD; a usage-only row of a report whose costs come in rows of their own has 0. */
  cost: number;
  /** The provider's API key id, when the report is grouped by it. */
  key?: string;
}

/** The ledger's side: a day and model's sums, with how many rows had no price (store/reconcile-store.ts). */
export type LedgerRow = Omit<LedgerDayRow, 'dayStart'> & { day: string };

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of an epoch ms, UTC. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** Every day from `from` to `to`, both included (`YYYY-MM-DD`). */
export function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS) days.push(dayOf(t));
  return days;
}

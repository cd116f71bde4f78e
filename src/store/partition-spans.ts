/**
 * The time spans PostgreSQL's partitions of the ledger cover (ledger-partitions.ts), in UTC and
 * epoch milliseconds, the type of the partition key (created_at).
 */
export type Span = 'month' | 'day';

/** The start of the span `ms` falls in. */
export function spanStart(span: Span, ms: number): number {
  const d = new Date(ms);
  return span === 'month'
    ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
    : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}

/** The start of the span after the one starting at `start`. */
export function nextSpan(span: Span, start: number): number {
  const d = new Date(start);
  return span === 'month' ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) : start + 86_400_000;
}

/** The starts of the spans from the one holding `from` to the one holding `to`, both included. */
export function spansBetween(span: Span, from: number, to: number): number[] {
  const starts: number[] = [];
  for (let s = spanStart(span, from); s <= to; s = nextSpan(span, s)) starts.push(s);
  return starts;
}

/** `ledger_p2026_11` (a month), `ledger_content_p2026_11_28` (a day): the name says what it holds. */
export function partitionName(table: string, span: Span, start: number): string {
  const iso = new Date(start).toISOString();
  const parts = span === 'month' ? [iso.slice(0, 4), iso.slice(5, 7)] : [iso.slice(0, 4), iso.slice(5, 7), iso.slice(8, 10)];
  return `${table}_p${parts.join('_')}`;
}

/**
 * The bounds of a range partition from PostgreSQL's text of them (pg_get_expr of relpartbound):
 * `FOR VALUES FROM ('1764547200000') TO ('1767225600000')`; undefined for the default partition
 * or anything else.
 */
export function parseBounds(text: string): { from: number; to: number } | undefined {
  const match = /^FOR VALUES FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)$/.exec(text);
  if (!match) return undefined;
  return { from: Number(match[1]), to: Number(match[2]) };
}

import type { LedgerRow, ReportRow } from './rows.ts';

/** The four amounts compared on each side. */
export interface Amounts {
  input: number;
  cached: number;
  output: number;
  cost: number;
}

const FIELDS = ['input', 'cached', 'output', 'cost'] as const;

/** When a reconciliation fails its check (config `reconcile.threshold`). */
export interface Threshold {
  /** A relative drift (of tokens or cost) past this fraction is over, e.g. 0.02. */
  relative: number;
  /** A cost drift under this many USD is never over, whatever its fraction (pennies on a quiet day). */
  absoluteUsd: number;
}

export type LineStatus = 'match' | 'drift' | 'zero_priced' | 'missing_in_ledger' | 'missing_in_report';

export interface DriftLine {
  day: string;
  model: string;
  ledger: Amounts & { requests: number; unpriced: number };
  report: Amounts;
  /** The provider API keys the report names for this day and model. */
  keys: string[];
  /** report - ledger. */
  drift: Amounts;
  /** drift / the larger side, in [-1, 1]; 0 when both sides are 0. */
  relative: Amounts;
  status: LineStatus;
  /** The line alone is past the threshold. */
  over: boolean;
}

export interface Comparison {
  lines: DriftLine[];
  totals: { ledger: Amounts; report: Amounts; drift: Amounts; relative: Amounts };
  /** Lines the ledger priced at 0 (no price known) that the provider billed. */
  zeroPriced: DriftLine[];
  /** Days of the range one side has rows for and the other none. */
  missingDays: { day: string; missingIn: 'ledger' | 'report' }[];
  over: boolean;
  /** Why it is over, one line each; empty when it is not. */
  reasons: string[];
}

const zero = (): Amounts => ({ input: 0, cached: 0, output: 0, cost: 0 });

/**
 * Providers report a model by its dated snapshot (`gpt-4o-mini-2024-07-18`) where a request may
 * have named the alias (`gpt-4o-mini`): both sides are compared without the date suffix.
 */
export function modelKey(model: string): string {
  return model.replace(/-(\d{4}-\d{2}-\d{2}|\d{8})$/, '');
}

function relativeOf(ledger: number, report: number): number {
  const larger = Math.max(Math.abs(ledger), Math.abs(report));
  return larger === 0 ? 0 : (report - ledger) / larger;
}

function compareAmounts(ledger: Amounts, report: Amounts): { drift: Amounts; relative: Amounts } {
  const drift = zero();
  const relative = zero();
  for (const f of FIELDS) {
    drift[f] = f === 'cost' ? roundUsd(report[f] - ledger[f]) : report[f] - ledger[f];
    relative[f] = relativeOf(ledger[f], report[f]);
  }
  return { drift, relative };
}

/** Cost sums of many float rows: compared to the micro-dollar, so float dust is no drift. */
const roundUsd = (usd: number) => Math.round(usd * 1e6) / 1e6;

function isOver(drift: Amounts, relative: Amounts, t: Threshold): boolean {
  const costOver = Math.abs(drift.cost) > t.absoluteUsd && Math.abs(relative.cost) > t.relative;
  const tokensOver = (['input', 'cached', 'output'] as const).some((f) => Math.abs(relative[f]) > t.relative);
  return costOver || tokensOver;
}

type Gathered = Pick<DriftLine, 'day' | 'model' | 'ledger' | 'report'> & { keys: Set<string> };

/** Both sides' rows of the range, summed per day and model (the model without its date suffix). */
function gather(ledgerRows: readonly LedgerRow[], reportRows: readonly ReportRow[], days: readonly string[]): Gathered[] {
  const inRange = new Set(days);
  const lines = new Map<string, Gathered>();
  const lineOf = (day: string, model: string) => {
    const id = `${day}\u0000${modelKey(model)}`;
    let line = lines.get(id);
    if (!line) {
      line = { day, model: modelKey(model), ledger: { ...zero(), requests: 0, unpriced: 0 }, report: zero(), keys: new Set() };
      lines.set(id, line);
    }
    return line;
  };
  for (const row of ledgerRows) {
    if (!inRange.has(row.day)) continue;
    const line = lineOf(row.day, row.model);
    for (const f of FIELDS) line.ledger[f] += row[f];
    line.ledger.requests += row.requests;
    line.ledger.unpriced += row.unpriced;
  }
  for (const row of reportRows) {
    if (!inRange.has(row.day)) continue;
    const line = lineOf(row.day, row.model);
    for (const f of FIELDS) line.report[f] += row[f];
    if (row.key) line.keys.add(row.key);
  }
  return [...lines.values()];
}

const reportEmpty = (l: Pick<DriftLine, 'report'>) => FIELDS.every((f) => l.report[f] === 0);

function statusOf(line: Gathered, drift: Amounts): LineStatus {
  if (line.ledger.requests === 0) return 'missing_in_ledger';
  if (reportEmpty(line)) return 'missing_in_report';
  if (line.ledger.unpriced > 0 && line.report.cost > line.ledger.cost) return 'zero_priced';
  return FIELDS.some((f) => drift[f] !== 0) ? 'drift' : 'match';
}

function judge(line: Gathered, threshold: Threshold): DriftLine {
  const { drift, relative } = compareAmounts(line.ledger, line.report);
  const status = statusOf(line, drift);
  const over = status === 'zero_priced' || isOver(drift, relative, threshold);
  return { ...line, keys: [...line.keys].sort(), drift, relative, status, over };
}

/** The days of the range with rows on one side only. */
function missingDaysOf(lines: readonly DriftLine[], days: readonly string[]): Comparison['missingDays'] {
  const ledgerDays = new Set(lines.filter((l) => l.ledger.requests > 0).map((l) => l.day));
  const reportDays = new Set(lines.filter((l) => !reportEmpty(l)).map((l) => l.day));
  const missing: Comparison['missingDays'] = [];
  for (const day of days) {
    if (ledgerDays.has(day) && !reportDays.has(day)) missing.push({ day, missingIn: 'report' });
    if (reportDays.has(day) && !ledgerDays.has(day)) missing.push({ day, missingIn: 'ledger' });
  }
  return missing;
}

/**
 * The ledger against the provider's report over the days given: a line per day and model (the
 * report's keys summed), the totals, the lines priced at 0 that the provider billed, the days one
 * side is missing, and whether any of it is past the threshold. Pure: the fetchers and the
 * ledger's query bring the rows.
 */
export function compareRows(
  ledgerRows: readonly LedgerRow[],
  reportRows: readonly ReportRow[],
  days: readonly string[],
  threshold: Threshold,
): Comparison {
  const lines = gather(ledgerRows, reportRows, days)
    .map((line) => judge(line, threshold))
    .sort((a, b) => a.day.localeCompare(b.day) || a.model.localeCompare(b.model));
  const totals = { ledger: zero(), report: zero() };
  for (const line of lines) {
    for (const f of FIELDS) {
      totals.ledger[f] += line.ledger[f];
      totals.report[f] += line.report[f];
    }
  }
  totals.ledger.cost = roundUsd(totals.ledger.cost);
  totals.report.cost = roundUsd(totals.report.cost);
  const missingDays = missingDaysOf(lines, days);
  const zeroPriced = lines.filter((l) => l.status === 'zero_priced');
  const total = compareAmounts(totals.ledger, totals.report);
  const reasons: string[] = [];
  if (isOver(total.drift, total.relative, threshold)) reasons.push(describeTotal(total.drift, total.relative));
  for (const l of zeroPriced) reasons.push(`${l.day} ${l.model}: priced at 0 in the ledger, billed $${l.report.cost.toFixed(6)}`);
  for (const m of missingDays) reasons.push(`${m.day}: no rows in the ${m.missingIn}`);
  for (const l of lines) {
    if (l.over && l.status !== 'zero_priced' && !missingDays.some((m) => m.day === l.day)) {
      reasons.push(`${l.day} ${l.model}: ${describeTotal(l.drift, l.relative)}`);
    }
  }
  return { lines, totals: { ...totals, ...total }, zeroPriced, missingDays, over: reasons.length > 0, reasons };
}

function describeTotal(drift: Amounts, relative: Amounts): string {
  const pct = (r: number) => `${(r * 100).toFixed(2)}%`;
  return [
    `cost ${drift.cost >= 0 ? '+' : ''}${drift.cost.toFixed(6)} USD (${pct(relative.cost)})`,
    `input ${drift.input} (${pct(relative.input)})`,
    `cached ${drift.cached} (${pct(relative.cached)})`,
    `output ${drift.output} (${pct(relative.output)})`,
  ].join(', ');
}

import type { SpendGroupBy, SpendReport } from '../../store/spend-report.ts';
import { cachedShare, groupColumns, type SpendNames } from './spend-json.ts';

const SUM_COLUMNS = [
  'requests',
  'errors',
  'input_tokens',
  'cached_input_tokens',
  'cached_share',
  'output_tokens',
  'cost_usd',
] as const;

/** The columns of each dimension grouped by (names beside ids). */
const GROUP_COLUMNS: Record<SpendGroupBy, string[]> = {
  project: ['project_id', 'project_name'],
  key: ['key_id', 'key_name'],
  model: ['model'],
  tag: ['tag'],
  provider_key: ['provider_key'],
};

/**
 * The report as CSV (RFC 4180): one line per group and period it spent in, or without group_by
 * one per period of the range. Periods are ISO 8601 UTC; costs in USD as the API gives them.
 */
export function spendCsv(report: SpendReport, groupBy: readonly SpendGroupBy[], names: SpendNames): string {
  const header = ['period_start', ...groupBy.flatMap((g) => GROUP_COLUMNS[g]), ...SUM_COLUMNS];
  const lines = [header.map(field).join(',')];
  const sums = (s: SpendReport['totals']) =>
    [s.requests, s.errors, s.inputTokens, s.cachedInputTokens, cachedShare(s) ?? '', s.outputTokens, s.costUsd].map(String);
  if (groupBy.length === 0) {
    for (const p of report.series) lines.push([new Date(p.start).toISOString(), ...sums(p.sums)].map(field).join(','));
  }
  for (const g of groupBy.length > 0 ? report.groups : []) {
    const columns = groupColumns(g.key, names);
    const dims = groupBy.flatMap((d) => GROUP_COLUMNS[d].map((c) => columns[c] ?? ''));
    for (const p of g.series) lines.push([new Date(p.start).toISOString(), ...dims, ...sums(p.sums)].map(field).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** A field quoted when it holds a comma, a quote or a line break; a leading = + - @ is quoted too (no formula in a spreadsheet). */
function field(value: string): string {
  if (/^[=+\-@]/.test(value) && Number.isNaN(Number(value))) return `"'${value.replaceAll('"', '""')}"`;
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

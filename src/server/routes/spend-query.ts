import { errors } from '../../errors/catalog.ts';
import {
  nextPeriod,
  periodStart,
  REPORT_PERIODS,
  type ReportPeriod,
  SPEND_GROUPS,
  type SpendGroupBy,
} from '../../store/spend-report.ts';
import type { SpendFilter } from '../../store/spend-tables.ts';
import { parseTime } from './requests.ts';

/** What GET /v1/spend reads (parseSpendQuery); any other parameter is refused (route-table.ts). */
export const SPEND_QUERY = ['group_by', 'period', 'from', 'to', 'format', 'project_id', 'key_id', 'model', 'tag'] as const;

export interface SpendQuery {
  groupBy: SpendGroupBy[];
  period: ReportPeriod;
  /** Aligned to the period: `from` a period's start, `to` the end of the period holding the given `to` (exclusive). */
  filter: SpendFilter;
  format: 'json' | 'csv';
}

/** The longest range per period: a report's series stays a chart's worth, and its read bounded. */
export const MAX_PERIODS: Record<ReportPeriod, number> = { hour: 24 * 31, day: 400, month: 120 };
/** The range without `from`: the last day in hours, 30 days, 12 months. */
const DEFAULT_PERIODS: Record<ReportPeriod, number> = { hour: 24, day: 30, month: 12 };

/** `group_by`'s dimensions, each once; a 400 naming it for an unknown one or one that does not go with `tag`. */
function parseGroupBy(value: string | undefined, tag: string | undefined): SpendGroupBy[] {
  const groupBy: SpendGroupBy[] = [];
  for (const g of (value ?? '').split(',')) {
    const name = g.trim();
    if (name === '') continue;
    if (!(SPEND_GROUPS as readonly string[]).includes(name)) {
      throw errors.invalidRequest(
        `group_by takes ${SPEND_GROUPS.join(', ')} (comma-separated), not "${name.slice(0, 40)}".`,
        'group_by',
      );
    }
    if (!groupBy.includes(name as SpendGroupBy)) groupBy.push(name as SpendGroupBy);
  }
  // The tag rollups are not per provider key (spend-tables.ts): a request has one key but may have many tags.
  if (groupBy.includes('provider_key') && (groupBy.includes('tag') || tag !== undefined)) {
    throw errors.invalidRequest('group_by provider_key does not go with group_by tag or a tag filter.', 'group_by');
  }
  return groupBy;
}

/** Every parameter checked, so a bad one is a 400 naming it. `accept`: the Accept header (text/csv asks for CSV). */
export function parseSpendQuery(search: URLSearchParams, accept: string | undefined, now: number): SpendQuery {
  const text = (k: string) => {
    const v = search.get(k) ?? undefined;
    if (v?.includes('\0')) throw errors.invalidRequest(`${k} contains a NUL byte.`, k);
    return v;
  };
  const tag = text('tag');
  const groupBy = parseGroupBy(text('group_by'), tag);
  const period = text('period') ?? 'day';
  if (!(REPORT_PERIODS as readonly string[]).includes(period)) {
    throw errors.invalidRequest(`period must be ${REPORT_PERIODS.join(', ')}.`, 'period');
  }
  const p = period as ReportPeriod;
  const format = text('format') ?? (accept?.includes('text/csv') ? 'csv' : 'json');
  if (format !== 'json' && format !== 'csv') throw errors.invalidRequest('format must be json or csv.', 'format');
  const toText = text('to');
  const fromText = text('from');
  const to = nextPeriod(p, periodStart(p, toText === undefined ? now : parseTime(toText, 'to') - 1));
  let from = to;
  if (fromText === undefined) for (let i = 0; i < DEFAULT_PERIODS[p]; i++) from = periodStart(p, from - 1);
  else from = periodStart(p, parseTime(fromText, 'from'));
  if (from >= to) throw errors.invalidRequest('from must be before to.', 'from');
  let count = 0;
  for (let t = from; t < to; t = nextPeriod(p, t)) {
    if (++count > MAX_PERIODS[p]) {
      throw errors.invalidRequest(
        `A report by ${p} spans at most ${MAX_PERIODS[p]} periods: narrow from and to, or take a longer period.`,
        'from',
      );
    }
  }
  return {
    groupBy,
    period: p,
    format,
    filter: { from, to, projectId: text('project_id'), keyId: text('key_id'), model: text('model'), tag },
  };
}

import { addSpend, noSpend, type SpendCell } from './spend-cells.ts';
import type { SpendFilter } from './spend-tables.ts';

export const SPEND_GROUPS = ['project', 'key', 'model', 'tag', 'provider_key'] as const;
export type SpendGroupBy = (typeof SPEND_GROUPS)[number];
export const REPORT_PERIODS = ['hour', 'day', 'month'] as const;
export type ReportPeriod = (typeof REPORT_PERIODS)[number];

export interface SpendSums {
  requests: number;
  errors: number;
  inputTokens: number;
  /** Of the input tokens, those read from the provider's prompt cache. */
  cachedInputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/**
 * One group's dimensions: only those grouped by are set ('' is the master key's, untagged, or no
 * key pool). A provider key is `provider/label`: labels are a provider's own.
 */
export type GroupKey = Partial<Record<SpendGroupBy, string>>;

export interface SpendGroup {
  key: GroupKey;
  sums: SpendSums;
  /** The periods the group spent in, oldest first (a period with nothing is left out). */
  series: { start: number; sums: SpendSums }[];
}

export interface SpendReport {
  totals: SpendSums;
  /** The totals per period, every period of the range included (zero where nothing was spent). */
  series: { start: number; sums: SpendSums }[];
  /** Costliest first. */
  groups: SpendGroup[];
}

const HOUR = 3_600_000;
const DAY = 86_400_000;

/** The start (UTC) of the period holding `t`. */
export function periodStart(period: ReportPeriod, t: number): number {
  if (period === 'hour') return Math.floor(t / HOUR) * HOUR;
  if (period === 'day') return Math.floor(t / DAY) * DAY;
  const d = new Date(t);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The start of the period after the one starting at `start`. */
export function nextPeriod(period: ReportPeriod, start: number): number {
  if (period === 'hour') return start + HOUR;
  if (period === 'day') return start + DAY;
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** Every period start from `from` (a period start) up to `to` (exclusive). */
export function periodsOf(period: ReportPeriod, from: number, to: number): number[] {
  const starts: number[] = [];
  for (let t = from; t < to; t = nextPeriod(period, t)) starts.push(t);
  return starts;
}

function keyOf(c: SpendCell, groupBy: readonly SpendGroupBy[]): GroupKey {
  const key: GroupKey = {};
  for (const g of groupBy) {
    if (g === 'project') key.project = c.projectId;
    else if (g === 'key') key.key = c.keyId;
    else if (g === 'model') key.model = `${c.provider}/${c.model}`;
    else if (g === 'provider_key') key.provider_key = c.providerKey ? `${c.provider}/${c.providerKey}` : '';
    else key.tag = c.tag ?? '';
  }
  return key;
}

/**
 * The report from the rollups' cells: `totalCells` counts each request once (the untagged rollup,
 * or one tag's cells), `groupCells` are what is grouped (the tag rollup when grouping by tag,
 * whose groups overlap: a request with two tags is in both). Cells are of hours or days; each
 * counts in the `period` holding its start.
 */
export function buildReport(
  totalCells: readonly SpendCell[],
  groupCells: readonly SpendCell[],
  groupBy: readonly SpendGroupBy[],
  period: ReportPeriod,
  periods: readonly number[],
): SpendReport {
  const totals = noSpend();
  const perPeriod = new Map(periods.map((start) => [start, noSpend()]));
  for (const c of totalCells) {
    addSpend(totals, c);
    const sums = perPeriod.get(periodStart(period, c.start));
    if (sums) addSpend(sums, c);
  }
  const groups = new Map<string, { key: GroupKey; sums: SpendSums; series: Map<number, SpendSums> }>();
  for (const c of groupBy.length > 0 ? groupCells : []) {
    const key = keyOf(c, groupBy);
    const id = JSON.stringify(key);
    let group = groups.get(id);
    if (!group) groups.set(id, (group = { key, sums: noSpend(), series: new Map() }));
    addSpend(group.sums, c);
    const start = periodStart(period, c.start);
    let sums = group.series.get(start);
    if (!sums) group.series.set(start, (sums = noSpend()));
    addSpend(sums, c);
  }
  return {
    totals,
    series: [...perPeriod].map(([start, sums]) => ({ start, sums })),
    groups: [...groups.values()]
      .map((g) => ({
        key: g.key,
        sums: g.sums,
        series: [...g.series].sort(([a], [b]) => a - b).map(([start, sums]) => ({ start, sums })),
      }))
      .sort((a, b) => b.sums.costUsd - a.sums.costUsd || b.sums.requests - a.sums.requests),
  };
}

/** Reads one rollup's cells, summed over every dimension but `keep` (store/spend-tables.ts readSpend, through the ledger store). */
export type SpendReader = (
  rollup: 'hours' | 'days',
  byTag: boolean,
  filter: SpendFilter,
  keep: readonly SpendGroupBy[],
) => Promise<SpendCell[]>;

/**
 * The report of a filtered view: hours for `hour`, days for `day` and `month`. Totals count each
 * request once (the untagged rollup, or with a tag filter that tag's cells); grouping by tag reads
 * the tag rollup beside them.
 */
export async function readReport(
  read: SpendReader,
  q: { groupBy: readonly SpendGroupBy[]; period: ReportPeriod; filter: SpendFilter },
): Promise<SpendReport> {
  const rollup = q.period === 'hour' ? 'hours' : 'days';
  const totalsByTag = q.filter.tag !== undefined;
  const groupsByTag = q.groupBy.includes('tag') && !totalsByTag;
  // The totals' cells are the groups' too unless the groups are tags: each read keeps what its cells are grouped by.
  const [totalCells, tagCells] = await Promise.all([
    read(rollup, totalsByTag, q.filter, groupsByTag ? q.groupBy.filter((g) => g !== 'tag') : q.groupBy),
    groupsByTag ? read(rollup, true, q.filter, q.groupBy) : undefined,
  ]);
  return buildReport(totalCells, tagCells ?? totalCells, q.groupBy, q.period, periodsOf(q.period, q.filter.from, q.filter.to));
}

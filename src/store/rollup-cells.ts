import type { LedgerRecord } from '../accounting/ledger-record.ts';

/** Upper bounds (ms) of the TTFT and latency histogram buckets; the last one catches the rest. */
export const BUCKET_BOUNDS_MS = [10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 120_000];

/** One period (a minute or an hour) of one project's requests to one provider/model. */
export interface RollupCell {
  /** Epoch ms of the period's start. */
  start: number;
  /** The requests' project; NO_PROJECT for the master key's (and, after migration 0023, older periods'). */
  projectId: string;
  provider: string;
  model: string;
  requests: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** Counts per BUCKET_BOUNDS_MS bucket, plus one past the last bound. */
  ttft: number[];
  latency: number[];
}

/** The outcomes a rollup counts as errors: the request failed, whether sluice saw it end or not. */
export const FAILED: ReadonlySet<LedgerRecord['outcome']> = new Set(['error', 'interrupted']);

/** The rollups' project of requests made without one (the master key's): the column is part of the key, never null. */
export const NO_PROJECT = '';

/**
 * Provider/model pairs per period and project of one batch before the rest count as `other`: the
 * bound on one upsert's rows, whatever model names a batch carries. Projects themselves are
 * bounded by the operator, who creates them; a project's `other` stays its own, so a member's
 * charts still count every one of its requests.
 */
const MAX_PAIRS_PER_PERIOD = 50;

/**
 * Ledger records summed per period (`periodMs`: a minute, an hour), project and provider/model:
 * what a stored batch adds to the rollups (rollup-tables.ts). Ordered by period, project, provider
 * and model, so concurrent upserts of the same rows take their locks in one order (no deadlock on
 * PostgreSQL).
 */
export function summarize(records: readonly LedgerRecord[], periodMs: number): RollupCell[] {
  const periods = new Map<string, Map<string, RollupCell>>();
  for (const r of records) {
    const start = Math.floor(r.createdAt / periodMs) * periodMs;
    const projectId = r.projectId ?? NO_PROJECT;
    const periodKey = `${start}\0${projectId}`;
    let cells = periods.get(periodKey);
    if (!cells) periods.set(periodKey, (cells = new Map()));
    let pair = `${r.provider}\0${r.model}`;
    if (!cells.has(pair) && cells.size >= MAX_PAIRS_PER_PERIOD) pair = 'other\0other';
    let cell = cells.get(pair);
    if (!cell) {
      const [provider, model] = pair.split('\0');
      cell = {
        start,
        projectId,
        provider,
        model,
        requests: 0,
        errors: 0,
        inputTokens: 0,
        outputTokens: 0,
        costUsd: 0,
        ttft: emptyHistogram(),
        latency: emptyHistogram(),
      };
      cells.set(pair, cell);
    }
    cell.requests++;
    if (FAILED.has(r.outcome)) cell.errors++;
    cell.inputTokens += r.inputTokens;
    cell.outputTokens += r.outputTokens;
    cell.costUsd += r.costUsd;
    if (r.ttftMs !== null) cell.ttft[bucketOf(r.ttftMs)]++;
    cell.latency[bucketOf(r.latencyMs)]++;
  }
  return [...periods.values()]
    .flatMap((cells) => [...cells.values()])
    .sort(
      (a, b) =>
        a.start - b.start || compare(a.projectId, b.projectId) || compare(a.provider, b.provider) || compare(a.model, b.model),
    );
}

/**
 * Cells summed over their projects, per period and provider/model (projectId NO_PROJECT): what the
 * minute rollup across projects adds. Summed from the per-project cells, `other` included, so the
 * two grains hold the same sums; ordered as summarize's, for the same lock order.
 */
export function acrossProjects(cells: readonly RollupCell[]): RollupCell[] {
  return summedAs(cells, (c) => ({ projectId: NO_PROJECT, provider: c.provider, model: c.model }));
}

/**
 * Cells summed over their projects and models, per period (projectId, provider and model empty):
 * what the minute histograms across projects add. Ordered by period, for the same lock order.
 */
export function acrossModels(cells: readonly RollupCell[]): RollupCell[] {
  return summedAs(cells, () => ({ projectId: NO_PROJECT, provider: '', model: '' }));
}

/** Cells summed per period and the key `keyOf` gives them, in summarize's order. */
function summedAs(
  cells: readonly RollupCell[],
  keyOf: (c: RollupCell) => Pick<RollupCell, 'projectId' | 'provider' | 'model'>,
): RollupCell[] {
  const summed = new Map<string, RollupCell>();
  for (const c of cells) {
    const key = keyOf(c);
    const id = `${c.start}\0${key.projectId}\0${key.provider}\0${key.model}`;
    const into = summed.get(id);
    if (!into) {
      summed.set(id, { ...c, ...key, ttft: [...c.ttft], latency: [...c.latency] });
      continue;
    }
    into.requests += c.requests;
    into.errors += c.errors;
    into.inputTokens += c.inputTokens;
    into.outputTokens += c.outputTokens;
    into.costUsd += c.costUsd;
    c.ttft.forEach((n, i) => (into.ttft[i] += n));
    c.latency.forEach((n, i) => (into.latency[i] += n));
  }
  return [...summed.values()].sort((a, b) => a.start - b.start || compare(a.provider, b.provider) || compare(a.model, b.model));
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Zero counts for every bucket, the one past the last bound included. */
export function emptyHistogram(): number[] {
  return Array.from({ length: BUCKET_BOUNDS_MS.length + 1 }, () => 0);
}

function bucketOf(ms: number): number {
  const i = BUCKET_BOUNDS_MS.findIndex((bound) => ms <= bound);
  return i === -1 ? BUCKET_BOUNDS_MS.length : i;
}

/**
 * The q-quantile of a histogram as its bucket's upper bound (an upper estimate; null when empty,
 * Infinity past the last bound).
 */
export function quantileOf(counts: readonly number[], q: number): number | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i];
    if (seen >= q * total) return BUCKET_BOUNDS_MS[i] ?? Number.POSITIVE_INFINITY;
  }
  return Number.POSITIVE_INFINITY;
}

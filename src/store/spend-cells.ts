import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { FAILED } from './rollup-cells.ts';

/**
 * One period (an hour, a day) of one project/key/model/provider key's requests, and for the tag
 * rollups of one project/key/model and tag: what the spend report (GET /v1/spend) sums. The
 * request log's absent project or key (the master key), or provider key (no key pool), is '' here,
 * so it can be part of a primary key.
 */
export interface SpendCell {
  /** Epoch ms of the period's start (UTC). */
  start: number;
  projectId: string;
  keyId: string;
  provider: string;
  model: string;
  /** Only in the tag rollups: the tag, or '' for an untagged request. */
  tag?: string;
  /** Only in the untagged rollups: the label of the provider key (providers.<name>.api_keys), or ''. */
  providerKey?: string;
  requests: number;
  errors: number;
  inputTokens: number;
  /** Of the input tokens, those read from the provider's prompt cache. */
  cachedInputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** The sums of a cell (and of a report's group) that counts nothing yet. */
export const noSpend = () => ({ requests: 0, errors: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, costUsd: 0 });

/** Adds `c`'s sums into `into`'s: the one place a cell's six sums are added up. */
export function addSpend(into: ReturnType<typeof noSpend>, c: ReturnType<typeof noSpend>): void {
  into.requests += c.requests;
  into.errors += c.errors;
  into.inputTokens += c.inputTokens;
  into.cachedInputTokens += c.cachedInputTokens;
  into.outputTokens += c.outputTokens;
  into.costUsd += c.costUsd;
}

/** What a tag cell is named when a batch's period has more distinct tags than its bound (no tag can be: tag-rules.ts). */
export const OTHER_TAG = '(other)';

/**
 * Bounds on one batch's cells per period, whatever names its requests carry: models past the
 * first MAX_MODELS count as `other/other` (as the console's rollups do), tags past the first
 * MAX_TAGS_PER_PERIOD as OTHER_TAG. Projects and keys are the operator's, bounded already.
 */
const MAX_MODELS = 50;
const MAX_TAGS_PER_PERIOD = 100;

/**
 * Records summed per period and project/key/model: without `byTag` also per provider key, with
 * `byTag` per tag instead, a record counted
 * in each of its tags' cells (and an untagged one in tag ''), so a tag rollup's cells overlap and
 * are never summed across tags for a total (the untagged rollup is). Ordered by every dimension,
 * so concurrent upserts of the same rows take their locks in one order (no deadlock on PostgreSQL).
 */
export function summarizeSpend(records: readonly LedgerRecord[], periodMs: number, byTag: boolean): SpendCell[] {
  const periods = new Map<number, { cells: Map<string, SpendCell>; models: Set<string>; tags: Set<string> }>();
  for (const r of records) {
    // A dry run spends nothing, and is not a request of the report (docs/api/dry-run.md).
    if (r.dryRun) continue;
    const start = Math.floor(r.createdAt / periodMs) * periodMs;
    let period = periods.get(start);
    if (!period) periods.set(start, (period = { cells: new Map(), models: new Set(), tags: new Set() }));
    let [provider, model] = [r.provider, r.model];
    const pair = `${provider}\0${model}`;
    if (!period.models.has(pair)) {
      if (period.models.size >= MAX_MODELS) [provider, model] = ['other', 'other'];
      else period.models.add(pair);
    }
    const tags = byTag ? tagsOf(r, period.tags) : [undefined];
    for (const tag of tags) {
      const providerKey = byTag ? undefined : (r.providerKey ?? '');
      const cell = cellFor(period.cells, {
        start,
        projectId: r.projectId ?? '',
        keyId: r.keyId ?? '',
        provider,
        model,
        tag,
        providerKey,
      });
      cell.requests++;
      if (FAILED.has(r.outcome)) cell.errors++;
      cell.inputTokens += r.inputTokens;
      cell.cachedInputTokens += r.cachedInputTokens;
      cell.outputTokens += r.outputTokens;
      cell.costUsd += r.costUsd;
    }
  }
  return [...periods.values()].flatMap((p) => [...p.cells.values()]).sort(compareCells);
}

/** The record's tags, each once, past the period's bound as OTHER_TAG; [''] when it has none. */
function tagsOf(r: LedgerRecord, seen: Set<string>): string[] {
  if (!r.tags || r.tags.length === 0) return [''];
  const tags = new Set<string>();
  for (const tag of r.tags) {
    if (!seen.has(tag) && seen.size >= MAX_TAGS_PER_PERIOD) {
      tags.add(OTHER_TAG);
      continue;
    }
    seen.add(tag);
    tags.add(tag);
  }
  return [...tags];
}

/**
 * Untagged cells summed over their keys and provider keys, per period, project and
 * provider/model (keyId and providerKey ''): what the spend rollup per project adds. Summed from
 * summarizeSpend's cells, `other/other` included, so both grains hold the same sums; in
 * compareCells' order, for the same lock order.
 */
export function acrossKeys(cells: readonly SpendCell[]): SpendCell[] {
  const summed = new Map<string, SpendCell>();
  for (const c of cells) {
    const id = [c.start, c.projectId, c.provider, c.model].join('\0');
    let into = summed.get(id);
    if (!into) {
      into = {
        start: c.start,
        projectId: c.projectId,
        keyId: '',
        provider: c.provider,
        model: c.model,
        providerKey: '',
        ...noSpend(),
      };
      summed.set(id, into);
    }
    addSpend(into, c);
  }
  return [...summed.values()].sort(compareCells);
}

type Dimensions = Pick<SpendCell, 'start' | 'projectId' | 'keyId' | 'provider' | 'model' | 'tag' | 'providerKey'>;

function cellFor(cells: Map<string, SpendCell>, d: Dimensions): SpendCell {
  const id = [d.projectId, d.keyId, d.provider, d.model, d.tag ?? '', d.providerKey ?? ''].join('\0');
  let cell = cells.get(id);
  if (!cell) {
    cell = { ...d, ...noSpend() };
    if (d.tag === undefined) delete cell.tag;
    if (d.providerKey === undefined) delete cell.providerKey;
    cells.set(id, cell);
  }
  return cell;
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function compareCells(a: SpendCell, b: SpendCell): number {
  return (
    a.start - b.start ||
    compare(a.projectId, b.projectId) ||
    compare(a.keyId, b.keyId) ||
    compare(a.provider, b.provider) ||
    compare(a.model, b.model) ||
    compare(a.tag ?? '', b.tag ?? '') ||
    compare(a.providerKey ?? '', b.providerKey ?? '')
  );
}

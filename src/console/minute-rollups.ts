import type { LedgerRecord } from '../accounting/ledger-record.ts';

/** Upper bounds (ms) of the TTFT and latency histogram buckets; the last one catches the rest. */
export const BUCKET_BOUNDS_MS = [10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 120_000];

/** One minute of one provider/model's requests. */
export interface MinuteCell {
  minute: number;
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

/** How many minutes are kept, and provider/model pairs per minute before the rest count as `other`. */
const KEEP_MINUTES = 24 * 60;
const MAX_PAIRS_PER_MINUTE = 50;

/**
 * Per-minute rollups of the requests this instance wrote to the ledger, fed by the ledger
 * writer once a batch is stored: the charts read these, never the raw ledger. In memory and
 * per instance: a restart starts them empty (the ledger itself keeps everything).
 */
export class MinuteRollups {
  private readonly minutes = new Map<number, Map<string, MinuteCell>>();

  add(records: readonly LedgerRecord[]): void {
    for (const r of records) this.addOne(r);
    this.prune();
  }

  /** The cells of the minutes from `since` (epoch ms), oldest first. */
  since(since: number): MinuteCell[] {
    const from = Math.floor(since / 60_000) * 60_000;
    const out: MinuteCell[] = [];
    for (const minute of [...this.minutes.keys()].sort((a, b) => a - b)) {
      if (minute >= from) out.push(...this.minutes.get(minute)!.values());
    }
    return out;
  }

  private addOne(r: LedgerRecord): void {
    const minute = Math.floor(r.createdAt / 60_000) * 60_000;
    let cells = this.minutes.get(minute);
    if (!cells) this.minutes.set(minute, (cells = new Map()));
    let pair = `${r.provider}\0${r.model}`;
    if (!cells.has(pair) && cells.size >= MAX_PAIRS_PER_MINUTE) pair = 'other\0other';
    let cell = cells.get(pair);
    if (!cell) {
      const [provider, model] = pair.split('\0');
      cell = {
        minute,
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
    if (r.outcome === 'error') cell.errors++;
    cell.inputTokens += r.inputTokens;
    cell.outputTokens += r.outputTokens;
    cell.costUsd += r.costUsd;
    if (r.ttftMs !== null) cell.ttft[bucketOf(r.ttftMs)]++;
    cell.latency[bucketOf(r.latencyMs)]++;
  }

  /** Minutes a day older than the newest one are dropped: the rollups hold one day at most. */
  private prune(): void {
    if (this.minutes.size === 0) return;
    const oldestKept = Math.max(...this.minutes.keys()) - KEEP_MINUTES * 60_000;
    for (const minute of this.minutes.keys()) if (minute <= oldestKept) this.minutes.delete(minute);
  }
}

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

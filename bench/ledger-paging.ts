/**
 * The request log on a large ledger (issue 14: one page under 50 ms on 1M rows): seeds N rows
 * into an embedded SQLite store in a temp folder through the store's own insert, then times one
 * page (limit 50) of each kind the console and GET /v1/requests ask for, warm, and checks every
 * page against the right answer worked out from the seeded rows (test/helpers/ledger-rows.ts).
 * Run by `node bench/ledger-page.ts` and as a step of `npm run bench`.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { LedgerRecord } from '../src/accounting/ledger-record.ts';
import { LedgerStore } from '../src/store/ledger-store.ts';
import { openDatabase } from '../src/store/open-database.ts';
import type { OpenedDatabase } from '../src/store/store-location.ts';
import {
  keyName,
  MODELS,
  projectName,
  projectOfKey,
  recordOf,
  requestIdOf,
  requestedModelOf,
  type RowColumns,
  rowColumns,
} from '../test/helpers/ledger-rows.ts';
import { percentile } from './stats.ts';

export const PAGE_TARGET_MS = 50;
const LIMIT = 50;
const SEED_BATCH = 5000;
const DEEP_PAGES = 200;
const DAY_MS = 86_400_000;

export interface PageTiming {
  name: string;
  /** Rows the page returned (checked against the seeded rows). */
  rows: number;
  bestMs: number;
  medianMs: number;
  /** This process's CPU time for the page, median: the query's cost with less of the machine's noise (SQLite runs in-process, synchronously). */
  cpuMedianMs: number;
  pass: boolean;
}

export interface LedgerPageResult {
  rows: number;
  seedSeconds: number;
  /** The SQLite file (and its WAL) once seeded. */
  storeMiB: number;
  runs: number;
  targetMs: number;
  pages: PageTiming[];
}

/** What a page is asked for, and which seeded rows it must return in which order. */
interface PageCase {
  name: string;
  read: (store: LedgerStore) => Promise<LedgerRecord[]>;
  /** The seeded rows' numbers the page must hold, in order. */
  expected: () => number[];
}

/** Filters as the store takes them, with the same test on a seeded row. */
interface Filter {
  query: {
    model?: string;
    provider?: string;
    keyId?: string;
    projectId?: string;
    outcome?: LedgerRecord['outcome'];
    since?: number;
    until?: number;
  };
  keep: (i: number) => boolean;
}

function filterOf(c: RowColumns, query: Filter['query']): Filter {
  const keep = (i: number) => {
    const m = MODELS[c.model[i]];
    const key = c.key[i];
    if (query.model !== undefined) {
      const x = query.model;
      if (requestedModelOf(c, i) !== x && m.model !== x && `${m.provider}/${m.model}` !== x) return false;
    }
    if (query.provider !== undefined && m.provider !== query.provider) return false;
    if (query.keyId !== undefined && (key < 0 || keyName(key) !== query.keyId)) return false;
    if (query.projectId !== undefined && (key < 0 || projectName(projectOfKey(key)) !== query.projectId)) return false;
    if (query.outcome !== undefined && ['ok', 'error', 'cancelled'][c.outcome[i]] !== query.outcome) return false;
    if (query.since !== undefined && c.createdAt[i] < query.since) return false;
    if (query.until !== undefined && c.createdAt[i] >= query.until) return false;
    return true;
  };
  return { query, keep };
}

const medianOf = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

/** The seeded rows `keep` takes, newest first (created_at, then request_id, descending). */
function newestFirst(c: RowColumns, keep: (i: number) => boolean): number[] {
  const kept: number[] = [];
  for (let i = 0; i < c.rows; i++) if (keep(i)) kept.push(i);
  // Request ids start with created_at and end with the row's number: ties go by the number.
  return kept.sort((a, b) => c.createdAt[b] - c.createdAt[a] || b - a);
}

/** The seeded row a record is (its request id ends with the row's number). */
const rowOf = (r: LedgerRecord) => Number(r.requestId.slice(-12));

/**
 * Inserts the rows in order (rowid i + 1 is row i), SEED_BATCH rows a call of the store's own
 * insert (as the ledger writer calls it, with a larger batch); at each of `marks` (ascending) it takes the follow cursor of a page read
 * once that many rows are written, as a console watcher opened then would hold.
 */
async function seed(db: OpenedDatabase, c: RowColumns, marks: number[]): Promise<Map<number, string>> {
  const store = new LedgerStore(db.db);
  const cursors = new Map<number, string>();
  let i = 0;
  for (;;) {
    for (const mark of marks) if (mark === i) cursors.set(mark, (await store.list({ limit: 1 })).followCursor);
    if (i === c.rows) return cursors;
    const next = Math.min(c.rows, i + SEED_BATCH, ...marks.filter((m) => m > i));
    const batch = Array.from({ length: next - i }, (_, j) => recordOf(c, i + j));
    await store.insert(batch);
    i = next;
  }
}

function cases(c: RowColumns, end: number, cursors: Map<number, string>, mid: number, nearEnd: number): PageCase[] {
  const all = (i: number) => i >= 0;
  const list = (name: string, query: Filter['query']): PageCase => {
    const f = filterOf(c, query);
    return {
      name,
      read: async (s) => (await s.list({ ...query, limit: LIMIT })).data,
      expected: () => newestFirst(c, f.keep).slice(0, LIMIT),
    };
  };
  const writeOrder = (name: string, mark: number, query: Filter['query']): PageCase => {
    const f = filterOf(c, query);
    const after = cursors.get(mark);
    return {
      name,
      read: async (s) => (await s.listInWriteOrder({ ...query, after, limit: LIMIT })).data,
      expected: () => {
        const rows: number[] = [];
        for (let i = mark; i < c.rows && rows.length < LIMIT; i++) if (f.keep(i)) rows.push(i);
        return rows;
      },
    };
  };
  let deepCursor: string | undefined;
  const midRow = Math.floor(c.rows / 2);
  const lastWeek = { since: end - 7 * DAY_MS, until: end - 6 * DAY_MS };
  const busyKey = keyName(1);
  return [
    list('first page', {}),
    {
      name: `page ${DEEP_PAGES + 1} (cursor after ${DEEP_PAGES} pages)`,
      read: async (s) => {
        if (deepCursor === undefined) {
          let cursor: string | undefined;
          for (let p = 0; p < DEEP_PAGES; p++) cursor = (await s.list({ limit: LIMIT, cursor })).nextCursor ?? undefined;
          deepCursor = cursor;
        }
        return (await s.list({ limit: LIMIT, cursor: deepCursor })).data;
      },
      expected: () => newestFirst(c, all).slice(DEEP_PAGES * LIMIT, (DEEP_PAGES + 1) * LIMIT),
    },
    {
      name: 'mid-range page (cursor at day 15)',
      read: async (s) => {
        const cursor = (await s.list({ until: c.createdAt[midRow] + 1, limit: 1 })).nextCursor ?? undefined;
        return (await s.list({ until: c.createdAt[midRow] + 1, cursor, limit: LIMIT })).data;
      },
      expected: () => newestFirst(c, (i) => c.createdAt[i] <= c.createdAt[midRow]).slice(1, LIMIT + 1),
    },
    list(`model=openai/gpt-4o-mini (~30% of rows)`, { model: 'openai/gpt-4o-mini' }),
    list(`model=groq/llama-3.1-8b (~0.5%)`, { model: 'groq/llama-3.1-8b' }),
    list('model=coder (an alias)', { model: 'coder' }),
    list('provider=mistral', { provider: 'mistral' }),
    list(`key=${keyName(1000)} (one of ${2000})`, { keyId: keyName(1000) }),
    list(`project=${projectName(7)}`, { projectId: projectName(7) }),
    list('outcome=error (~2%)', { outcome: 'error' }),
    list(`key=${busyKey} + one day a week ago`, { keyId: busyKey, ...lastWeek }),
    list('model=openai/gpt-4o + one day a week ago', { model: 'openai/gpt-4o', ...lastWeek }),
    list('outcome=error + one day a week ago', { outcome: 'error', ...lastWeek }),
    writeOrder('write order after a mid cursor', mid, {}),
    writeOrder(`write order after a mid cursor, key=${keyName(1000)}`, mid, { keyId: keyName(1000) }),
    writeOrder('write order after a mid cursor, outcome=error', mid, { outcome: 'error' }),
    writeOrder('write order after a mid cursor, model=groq/llama-3.1-8b', mid, { model: 'groq/llama-3.1-8b' }),
    writeOrder('live log poll (200 rows behind), outcome=ok', nearEnd, { outcome: 'ok' }),
    {
      name: 'get(request id)',
      read: async (s) => {
        const record = await s.get(requestIdOf(c, midRow));
        return record ? [record] : [];
      },
      expected: () => [midRow],
    },
  ];
}

/** Seeds `rows` rows, times each page `runs` times (after one warm-up run, which is checked). */
export async function ledgerPageBench(options: {
  rows: number;
  runs?: number;
  log?: (line: string) => void;
}): Promise<LedgerPageResult> {
  const { rows } = options;
  const runs = options.runs ?? 7;
  const log = options.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), 'sluice-ledger-page-'));
  const path = join(dir, 'ledger.db');
  const db = await openDatabase({ path });
  try {
    const end = Date.UTC(2026, 10, 24);
    const c = rowColumns(rows, end);
    const store = new LedgerStore(db.db);
    const mid = Math.floor(rows / 2);
    const nearEnd = Math.max(0, rows - 200);
    log(`ledger page: seeding ${rows.toLocaleString('en-US')} rows into ${path}`);
    const seedStart = performance.now();
    // A page cache the size of the store while seeding: with SQLite's default (2 MiB) each row's
    // seven index entries go to pages read back from the OS, and seeding took minutes. Back to
    // the default for the pages, which then see what a gateway's connection sees.
    await sql`pragma cache_size = -1000000`.execute(db.db);
    const cursors = await seed(db, c, [mid, nearEnd]);
    await sql`pragma cache_size = -2000`.execute(db.db);
    const seedSeconds = (performance.now() - seedStart) / 1000;
    const storeMiB =
      [path, `${path}-wal`].reduce((sum, p) => sum + (statSync(p, { throwIfNoEntry: false })?.size ?? 0), 0) / 2 ** 20;
    log(`ledger page: seeded in ${seedSeconds.toFixed(1)} s; timing ${runs} runs of each page`);
    const pages: PageTiming[] = [];
    for (const page of cases(c, end, cursors, mid, nearEnd)) {
      const got = (await page.read(store)).map(rowOf);
      const want = page.expected();
      if (got.join() !== want.join()) {
        throw new Error(
          `ledger page: ${page.name}: rows ${got.slice(0, 5).join(',')}... (${got.length}), expected ${want.slice(0, 5).join(',')}... (${want.length})`,
        );
      }
      const times: number[] = [];
      const cpu: number[] = [];
      for (let r = 0; r < runs; r++) {
        const start = performance.now();
        const cpuStart = process.cpuUsage();
        await page.read(store);
        const used = process.cpuUsage(cpuStart);
        times.push(performance.now() - start);
        cpu.push((used.user + used.system) / 1000);
      }
      const medianMs = medianOf(times);
      pages.push({
        name: page.name,
        rows: got.length,
        bestMs: Math.min(...times),
        medianMs,
        cpuMedianMs: medianOf(cpu),
        pass: medianMs <= PAGE_TARGET_MS,
      });
    }
    return { rows, seedSeconds, storeMiB, runs, targetMs: PAGE_TARGET_MS, pages };
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatLedgerPage(result: LedgerPageResult): string {
  const header = ['page (limit 50)', 'rows', 'best ms', 'median ms', 'CPU ms', `< ${result.targetMs} ms`];
  const body = result.pages.map((p) => [
    p.name,
    String(p.rows),
    p.bestMs.toFixed(2),
    p.medianMs.toFixed(2),
    p.cpuMedianMs.toFixed(2),
    p.pass ? 'PASS' : 'FAIL',
  ]);
  const widths = header.map((_, i) => Math.max(header[i].length, ...body.map((r) => r[i].length)));
  const line = (r: string[]) =>
    `| ${r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  const slowest = Math.max(...result.pages.map((p) => p.medianMs));
  return [
    `ledger paging: ${result.rows.toLocaleString('en-US')} rows in an embedded SQLite store (${result.storeMiB.toFixed(0)} MiB), ` +
      `seeded in ${result.seedSeconds.toFixed(1)} s; each page ${result.runs} runs, warm`,
    line(header),
    rule,
    ...body.map(line),
    `slowest median: ${slowest.toFixed(2)} ms (target < ${result.targetMs} ms): ${result.pages.every((p) => p.pass) ? 'PASS' : 'FAIL'}`,
  ].join('\n');
}

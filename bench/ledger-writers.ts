/**
 * Several processes writing the one embedded SQLite ledger at once, as `sluice serve --workers N`
 * does: `npx node bench/ledger-writers.ts [--processes 2] [--batches 40] [--rows 500]`. Each
 * process (forked, started together once all are ready) writes its records through the gateway's
 * own LedgerWriter and LedgerStore, as fast as they go, every other batch with a budget spend on
 * one window that every process shares (the same row, in the batch's transaction). Afterwards
 * this process counts, in the file: every row there (none lost, none twice) and the shared
 * window's spend equal to the sum of the increments. Printed per process: failed insert attempts
 * (SQLITE_BUSY past busy_timeout, which the writer retries) and each batch insert's time (the
 * wait for another process's write lock is in it): p50, p99, max.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { ledgerRecord } from '../test/helpers/ledger-records.ts';
import type { LedgerRecord } from '../src/accounting/ledger-record.ts';
import { describeStoreError } from '../src/store/classify-store-error.ts';
import { LedgerStore } from '../src/store/ledger-store.ts';
import { LedgerWriter } from '../src/store/ledger-writer.ts';
import { openDatabase } from '../src/store/open-database.ts';
import { percentile } from './stats.ts';

const { values } = parseArgs({
  options: {
    processes: { type: 'string', default: '2' },
    batches: { type: 'string', default: '40' },
    rows: { type: 'string', default: '500' },
    // Internal: this process is writer number N of the file at PATH.
    child: { type: 'string' },
    path: { type: 'string' },
  },
});
const processes = Number(values.processes);
const batches = Number(values.batches);
const rows = Number(values.rows);
if (![processes, batches, rows].every((n) => Number.isInteger(n) && n > 0)) {
  throw new Error('--processes, --batches and --rows take positive integers');
}
const WINDOW = 'key:shared:day:2026-11-24';
const USD = 0.0001;

interface ChildReport {
  writer: number;
  failures: number;
  failureMessages: string[];
  insertMs: number[];
}

if (values.child !== undefined && values.path) await child(Number(values.child), values.path);
else await parent();

async function child(writer: number, path: string): Promise<void> {
  const opened = await openDatabase({ path });
  const store = new LedgerStore(opened.db);
  const insertMs: number[] = [];
  const failureMessages: string[] = [];
  const sink = {
    async insert(records: readonly LedgerRecord[]) {
      const t0 = performance.now();
      try {
        await store.insert(records);
      } catch (err) {
        if (failureMessages.length < 5) failureMessages.push(describeStoreError(err));
        throw err;
      } finally {
        insertMs.push(performance.now() - t0);
      }
    },
  };
  const ledger = new LedgerWriter(sink, { flushIntervalMs: 1, batchSize: rows, maxBuffered: rows * 4, maxBackoffMs: 200 });
  await new Promise<void>((resolve) => {
    process.once('message', () => resolve());
    process.send?.('ready');
  });
  let n = 0;
  for (let b = 0; b < batches; b++) {
    for (let i = 0; i < rows; i++) {
      ledger.write(
        ledgerRecord({
          requestId: `w${writer}_${++n}`,
          createdAt: Date.now(),
          budgetSpend: b % 2 ? [{ windowId: WINDOW, subject: 'key:shared', period: 'day', start: 0, usd: USD }] : null,
        }),
      );
    }
    await ledger.flush();
  }
  await ledger.close();
  await opened.close();
  const report: ChildReport = { writer, failures: ledger.stats.failures, failureMessages, insertMs };
  process.send?.(report);
}

async function parent(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-ledger-writers-'));
  const path = join(dir, 'sluice.db');
  try {
    // Migrated once here, as the supervisor's first worker would have.
    await (await openDatabase({ path })).close();
    const children = Array.from({ length: processes }, (_, writer) =>
      fork(import.meta.filename, [
        '--child',
        String(writer),
        '--path',
        path,
        '--batches',
        String(batches),
        '--rows',
        String(rows),
      ]),
    );
    const reports = children.map(
      (c) =>
        new Promise<ChildReport>((resolve, reject) => {
          c.on('message', (m) => typeof m === 'object' && resolve(m as ChildReport));
          c.once('exit', (code) => reject(new Error(`writer exited with code ${code} before reporting`)));
        }),
    );
    await Promise.all(children.map((c) => new Promise((r) => c.once('message', r))));
    const t0 = performance.now();
    for (const c of children) c.send('go');
    const done = await Promise.all(reports);
    const seconds = (performance.now() - t0) / 1000;

    const db = new DatabaseSync(path, { readOnly: true });
    const found = db.prepare('select count(*) as n, count(distinct request_id) as distinct_ids from ledger').get() as {
      n: number;
      distinct_ids: number;
    };
    const spend = db.prepare('select spent_usd from budget_spend where window_id = ?').get(WINDOW) as
      | { spent_usd: number }
      | undefined;
    db.close();

    const expected = processes * batches * rows;
    const expectedSpend = processes * Math.floor(batches / 2) * rows * USD;
    console.log(
      `${processes} process(es) x ${batches} batches of ${rows} rows (every other batch in a transaction with a shared spend row), Node ${process.version}`,
    );
    console.log(
      `rows: ${found.n} of ${expected} expected (${found.distinct_ids} distinct); ${Math.round(expected / seconds)} rows/s in all`,
    );
    console.log(
      `shared spend: ${spend?.spent_usd.toFixed(6)} USD of ${expectedSpend.toFixed(6)} expected ` +
        `(${Math.abs((spend?.spent_usd ?? 0) - expectedSpend) < 1e-9 ? 'equal' : 'DIFFERENT'})`,
    );
    for (const r of done.sort((a, b) => a.writer - b.writer)) {
      const sorted = [...r.insertMs].sort((a, b) => a - b);
      console.log(
        `writer ${r.writer}: ${r.failures} failed insert attempt(s)${r.failureMessages.length ? ` (${r.failureMessages.join('; ')})` : ''}; ` +
          `batch insert p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms`,
      );
    }
    if (found.n !== expected || found.distinct_ids !== expected) process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

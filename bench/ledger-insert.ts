/**
 * What the embedded ledger's batch inserts cost the gateway's event loop (issue 15: no
 * synchronous pauses on the streaming path): `npx node bench/ledger-insert.ts [--batches 40]
 * [--rows 500] [--spend]`. Writes batches of `--rows` records through LedgerStore into a fresh
 * SQLite file, one after another, as the ledger writer does under load, and prints:
 * - the event loop's delay meanwhile (perf_hooks.monitorEventLoopDelay, sampled every 1 ms): max
 *   and p99, which is how long a stream's next chunk could wait behind an insert; beside it the
 *   same for an idle loop just before (what the machine alone adds: a shared machine deschedules
 *   the process now and then);
 * - the main thread's garbage collection pauses meanwhile (count, longest, total);
 * - rows per second;
 * - CPU per row on the main thread (process.threadCpuUsage) and in the whole process (the SQLite
 *   thread's share is the difference), and the main thread's CPU per batch: with the connection
 *   on the main thread, one pause of that length (a batch's statements run without a turn of
 *   the event loop in between); on its own thread, spread over a turn per statement;
 * - the process's RSS once the store is open, and after the inserts.
 * `--spend` gives every record a budget spend, so each batch is one transaction with its spend rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { ledgerRecord } from '../test/helpers/ledger-records.ts';
import type { LedgerRecord } from '../src/accounting/ledger-record.ts';
import { LedgerStore } from '../src/store/ledger-store.ts';
import { openDatabase } from '../src/store/open-database.ts';
import { newRequestId } from '../src/server/request-id.ts';

const { values } = parseArgs({
  options: {
    batches: { type: 'string', default: '40' },
    rows: { type: 'string', default: '500' },
    spend: { type: 'boolean', default: false },
  },
});
const batches = Number(values.batches);
const rows = Number(values.rows);
if (!(Number.isInteger(batches) && batches > 0 && Number.isInteger(rows) && rows > 0)) {
  throw new Error('--batches and --rows take positive integers');
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const rssBefore = process.memoryUsage().rss;
const dir = mkdtempSync(join(tmpdir(), 'sluice-ledger-bench-'));
const opened = await openDatabase({ path: join(dir, 'sluice.db') });
const rssOpen = process.memoryUsage().rss;

try {
  const store = new LedgerStore(opened.db);
  let n = 0;
  // Ids as the gateway issues them (time first: the primary key appends, request-id.ts).
  const record = (): LedgerRecord => {
    n++;
    return ledgerRecord({
      requestId: newRequestId(),
      createdAt: Date.now(),
      budgetSpend: values.spend
        ? [{ windowId: `key:k${n % 10}:day:2026-11-24`, subject: `key:k${n % 10}`, period: 'day', start: 0, usd: 0.0001 }]
        : null,
    });
  };
  // Records arrive a few at a time, as requests end, not all at once: building a batch in one
  // go would be a pause of the bench's own.
  const batch = async (): Promise<LedgerRecord[]> => {
    const records: LedgerRecord[] = [];
    while (records.length < rows) {
      for (let i = 0; i < 20 && records.length < rows; i++) records.push(record());
      await new Promise((r) => setImmediate(r));
    }
    return records;
  };
  // Warm-up: the statement cache and the file's first pages.
  for (let i = 0; i < 3; i++) await store.insert(await batch());

  // The machine alone: an idle loop for about as long as the inserts take.
  const idle = monitorEventLoopDelay({ resolution: 1 });
  idle.enable();
  await sleep(Math.max(1_000, (batches * rows) / 20));
  idle.disable();

  const gc: number[] = [];
  const gcObserver = new PerformanceObserver((list) => gc.push(...list.getEntries().map((e) => e.duration)));
  gcObserver.observe({ entryTypes: ['gc'] });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const thread = { user: 0, system: 0 };
  const all = { user: 0, system: 0 };
  let seconds = 0;
  let next = await batch();
  delay.enable();
  for (let b = 0; b < batches; b++) {
    // Only the inserts are timed and counted, not the building of the records.
    const thread0 = process.threadCpuUsage();
    const process0 = process.cpuUsage();
    const t0 = performance.now();
    await store.insert(next);
    seconds += (performance.now() - t0) / 1000;
    for (const [sum, spent] of [
      [thread, process.threadCpuUsage(thread0)],
      [all, process.cpuUsage(process0)],
    ]) {
      sum.user += spent.user;
      sum.system += spent.system;
    }
    next = await batch();
  }
  delay.disable();
  // GC entries are delivered asynchronously.
  await sleep(10);
  gcObserver.disconnect();
  const total = batches * rows;
  const perRow = (u: { user: number; system: number }) => ((u.user + u.system) / total).toFixed(2);
  const ms = (ns: number) => (ns / 1e6).toFixed(2);

  console.log(
    `${batches} batches of ${rows} rows${values.spend ? ' with budget spend (one transaction each)' : ''}, Node ${process.version}`,
  );
  console.log(
    `event loop delay during the inserts: max ${ms(delay.max)} ms, p99 ${ms(delay.percentile(99))} ms, mean ${ms(delay.mean)} ms; ` +
      `idle, just before: max ${ms(idle.max)} ms, p99 ${ms(idle.percentile(99))} ms`,
  );
  console.log(
    `main thread GC during the inserts: ${gc.length} pauses, longest ${Math.max(0, ...gc).toFixed(2)} ms, ` +
      `total ${gc.reduce((a, b) => a + b, 0).toFixed(1)} ms`,
  );
  console.log(`throughput: ${Math.round(total / seconds)} rows/s (${((seconds * 1000) / batches).toFixed(2)} ms per batch)`);
  console.log(
    `CPU per row: main thread ${perRow(thread)} µs, whole process ${perRow(all)} µs; ` +
      `main thread per batch ${((thread.user + thread.system) / batches / 1000).toFixed(2)} ms`,
  );
  console.log(
    `RSS: ${mib(rssBefore)} MiB before the store, ${mib(rssOpen)} MiB once open (+${mib(rssOpen - rssBefore)}), ` +
      `${mib(process.memoryUsage().rss)} MiB after the inserts`,
  );
} finally {
  await opened.close();
  rmSync(dir, { recursive: true, force: true });
}

import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { ledgerRecord } from '../../test/helpers/ledger-records.ts';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { type LedgerSink, LedgerWriter, type LedgerWriterOptions } from './ledger-writer.ts';

/**
 * A database stand-in: records the batches it accepted, can fail its next calls, and can be held
 * (a slow database) until the test releases it.
 */
class FakeSink implements LedgerSink {
  batches: string[][] = [];
  calls = 0;
  callTimes: number[] = [];
  inFlight = 0;
  maxInFlight = 0;
  failCalls = 0;
  /** Every record accepted, as written. */
  rows: LedgerRecord[] = [];
  /** A row this says true for fails its whole INSERT, as PostgreSQL refuses a NUL in text. */
  refuse: (r: LedgerRecord) => boolean = () => false;
  refusal: (r: LedgerRecord) => Error = () => Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
  private held: Promise<void> | undefined;
  private release: (() => void) | undefined;

  async insert(records: readonly LedgerRecord[]): Promise<void> {
    this.calls++;
    this.callTimes.push(performance.now());
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.held) await this.held;
      if (this.failCalls > 0) {
        this.failCalls--;
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      }
      const refused = records.find((r) => this.refuse(r));
      if (refused) throw this.refusal(refused);
      this.batches.push(records.map((r) => r.requestId));
      this.rows.push(...records);
    } finally {
      this.inFlight--;
    }
  }

  hold(): void {
    this.held = new Promise((r) => {
      this.release = r;
    });
  }

  unhold(): void {
    this.held = undefined;
    this.release?.();
  }

  get written(): string[] {
    return this.batches.flat();
  }
}

function writer(sink: LedgerSink | undefined, options: Partial<LedgerWriterOptions> = {}) {
  const logs: string[] = [];
  const w = new LedgerWriter(sink, {
    flushIntervalMs: 10_000,
    batchSize: 100,
    maxBuffered: 10_000,
    log: (m) => logs.push(m),
    ...options,
  });
  return { w, logs };
}

const ids = (n: number, prefix = 'r') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

function writeAll(w: LedgerWriter, list: string[]): void {
  for (const requestId of list) w.write(ledgerRecord({ requestId }));
}

/** Polls (bounded) until `done()` holds. */
async function until(done: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

describe('LedgerWriter', () => {
  it('tells its listeners of each batch once it is stored, with the budget spend it carried, and not before', async () => {
    const sink = new FakeSink();
    const { w } = writer(sink, { batchSize: 2 });
    const told: string[][] = [];
    w.onWritten((records) => told.push(records.map((r) => `${r.requestId}:${r.budgetSpend?.[0]?.usd ?? '-'}`)));
    sink.failCalls = 1;
    const spend = [{ windowId: 'key:k1:day:2026-11-24', subject: 'key:k1', period: 'day', start: 0, usd: 0.5 }];
    w.write(ledgerRecord({ requestId: 'a', budgetSpend: spend }));
    w.write(ledgerRecord({ requestId: 'b' }));
    await until(() => sink.calls === 1, 'the failed attempt');
    assert.deepEqual(told, [], 'a failed batch is not written');
    await w.flush();
    assert.deepEqual(told, [['a:0.5', 'b:-']]);
  });

  it('never writes on the write call; full batches go at once, the rest waits for the interval', async () => {
    const sink = new FakeSink();
    const { w } = writer(sink, { batchSize: 3, flushIntervalMs: 10_000 });
    writeAll(w, ids(7));
    assert.equal(sink.calls, 0);
    assert.equal(w.pending, 7);
    // Two full batches do not wait for the (long) interval; the partial one does.
    await until(() => sink.batches.length === 2, 'two full batches');
    await sleep(20);
    assert.deepEqual(sink.batches, [
      ['r0', 'r1', 'r2'],
      ['r3', 'r4', 'r5'],
    ]);
    assert.equal(w.pending, 1);
    await w.close();
    assert.deepEqual(sink.batches.at(-1), ['r6']);
    assert.equal(w.pending, 0);
  });

  it('writes a partial batch after the flush interval, in one batch', async () => {
    const sink = new FakeSink();
    const { w } = writer(sink, { batchSize: 100, flushIntervalMs: 40 });
    const start = performance.now();
    writeAll(w, ['a', 'b']);
    await sleep(1);
    writeAll(w, ['c']);
    await until(() => sink.batches.length === 1, 'the interval flush');
    // Timers never fire early (allow node's 1 ms rounding).
    assert.ok(sink.callTimes[0] - start >= 39, `flushed after ${sink.callTimes[0] - start} ms`);
    assert.deepEqual(sink.batches, [['a', 'b', 'c']]);
    // The next record starts a new interval.
    writeAll(w, ['d']);
    await until(() => sink.batches.length === 2, 'the second interval flush');
    assert.deepEqual(sink.batches[1], ['d']);
    await w.close();
  });

  it('survives a failing sink: retries with doubling backoff, loses nothing, keeps the order', async () => {
    const sink = new FakeSink();
    sink.failCalls = 3;
    const { w, logs } = writer(sink, { batchSize: 4, flushIntervalMs: 5 });
    writeAll(w, ids(6));
    // Records keep arriving while the database is down.
    await until(() => sink.calls >= 2, 'the first retry');
    writeAll(w, ids(5, 's'));
    await until(() => w.pending === 0, 'everything written');
    assert.deepEqual(sink.written, [...ids(6), ...ids(5, 's')]);
    assert.equal(w.stats.failures, 3);
    assert.equal(w.stats.dropped, 0);
    // The failed batch is retried first, as it was (same records, same order).
    assert.deepEqual(sink.batches[0], ['r0', 'r1', 'r2', 'r3']);
    assert.deepEqual(
      logs.map((m) => /retrying in (\d+) ms/.exec(m)?.[1]),
      ['100', '200', '400'],
    );
    const gaps = sink.callTimes.slice(1, 4).map((t, i) => t - sink.callTimes[i]);
    gaps.forEach((gap, i) => assert.ok(gap >= 100 * 2 ** i - 1, `retry ${i + 1} after ${gap} ms`));
    await w.close();
  });

  it('does not block writers on a slow sink, and keeps one batch in flight at a time', async () => {
    const sink = new FakeSink();
    sink.hold();
    const { w } = writer(sink, { batchSize: 50, flushIntervalMs: 1 });
    writeAll(w, ids(50));
    await until(() => sink.calls === 1, 'the first batch in flight');
    // The database is stuck; writes still return at once and only buffer.
    writeAll(w, ids(500, 's'));
    assert.equal(w.pending, 550);
    await sleep(20);
    assert.equal(sink.calls, 1);
    sink.unhold();
    await until(() => w.pending === 0, 'the backlog written');
    assert.deepEqual(sink.written, [...ids(50), ...ids(500, 's')]);
    assert.equal(sink.maxInFlight, 1);
    assert.ok(sink.batches.every((b) => b.length <= 50));
    await w.close();
  });

  it('bounds the buffer: records beyond max_buffered are dropped, counted and logged', async () => {
    const sink = new FakeSink();
    sink.hold();
    const { w, logs } = writer(sink, { batchSize: 2, flushIntervalMs: 1, maxBuffered: 5 });
    writeAll(w, ids(8));
    assert.equal(w.pending, 5);
    assert.deepEqual(w.stats, { pending: 5, dropped: 3, failures: 0, setAside: 0, sanitized: 0 });
    // Logged once at the first drop (then every 1000), not per record.
    assert.deepEqual(logs, ['ledger: buffer full (5); 1 record(s) dropped so far']);
    sink.unhold();
    await w.close();
    assert.deepEqual(sink.written, ids(5));
  });

  it('close() flushes everything that is buffered, in order', async () => {
    const sink = new FakeSink();
    const { w } = writer(sink, { batchSize: 100, flushIntervalMs: 60_000 });
    writeAll(w, ids(1234));
    await w.close();
    assert.equal(w.pending, 0);
    assert.deepEqual(sink.written, ids(1234));
    assert.ok(sink.batches.every((b) => b.length <= 100));
  });

  it('counts and logs a record written after close() instead of losing it silently', async () => {
    const sink = new FakeSink();
    const { w, logs } = writer(sink);
    await w.close();
    w.write(ledgerRecord({ requestId: 'late' }));
    assert.equal(w.stats.dropped, 1);
    assert.equal(w.pending, 0);
    assert.ok(logs.some((l) => l.includes('late') && l.includes('after the ledger closed')));
  });

  it('close() gives up after its timeout on a dead sink, says so, and stops retrying', async () => {
    const sink = new FakeSink();
    sink.failCalls = Number.POSITIVE_INFINITY;
    const { w, logs } = writer(sink, { batchSize: 10, flushIntervalMs: 1 });
    writeAll(w, ids(3));
    await w.close(150);
    assert.equal(w.pending, 3);
    assert.equal(logs.at(-1), 'ledger: shutdown: 3 record(s) could not be written within 150 ms and are lost');
    // No retry loop left behind to keep the process alive.
    const calls = sink.calls;
    await sleep(500);
    assert.equal(sink.calls, calls);
  });
  it('store down at shutdown without a journal: no record dropped silently, the rest is spilled, and the log says how many and where', async () => {
    const sink = new FakeSink();
    sink.failCalls = Number.POSITIVE_INFINITY;
    const spilled: string[][] = [];
    const { w, logs } = writer(sink, {
      batchSize: 10,
      flushIntervalMs: 1,
      spill: (records) => {
        spilled.push(records.map((r) => r.requestId));
        return '/var/lib/sluice/ledger-journal/spill-1-2.jsonl';
      },
    });
    writeAll(w, ids(5));
    assert.deepEqual(await w.close(150), { lost: 0 });
    assert.deepEqual(spilled, [ids(5)]);
    assert.equal(
      logs.at(-1),
      'ledger: shutdown: 5 record(s) not written within 150 ms; saved to /var/lib/sluice/ledger-journal/spill-1-2.jsonl, written at the next start',
    );
  });

  it('store down at shutdown and the spill file cannot be written: the records lost are counted and the log says why', async () => {
    const sink = new FakeSink();
    sink.failCalls = Number.POSITIVE_INFINITY;
    const { w, logs } = writer(sink, {
      batchSize: 10,
      flushIntervalMs: 1,
      spill: () => {
        throw Object.assign(new Error("EROFS: read-only file system, open '/x'"), { code: 'EROFS' });
      },
    });
    writeAll(w, ids(3));
    assert.deepEqual(await w.close(150), { lost: 3 });
    assert.match(
      logs.at(-1) ?? '',
      /^ledger: shutdown: 3 record\(s\) not written within 150 ms, nor saved to a spill file \(EROFS: .*\): they are lost$/,
    );
  });

  it('one bad record does not stop the ledger: a refused batch is split, the bad row set aside, every row behind it written', async () => {
    const sink = new FakeSink();
    // Like PostgreSQL: a NUL in any text column fails the whole INSERT with 22021.
    sink.refuse = (r) => r.model.includes('\0') || r.errorMessage === 'refuse me';
    const { w, logs } = writer(sink, { batchSize: 50, flushIntervalMs: 1 });
    writeAll(w, ids(20, 'a'));
    // sanitizeRecord removes the NUL before the buffer, so the sink never sees this one fail.
    w.write(ledgerRecord({ requestId: 'nul', model: 'gpt\0-4o' }));
    // A value no rule foresaw: the database refuses it, and it stays refused.
    w.write(ledgerRecord({ requestId: 'bad', errorMessage: 'refuse me' }));
    writeAll(w, ids(20, 'b'));
    await until(() => w.pending === 0, 'everything written');
    const byId = new Map(sink.rows.map((r) => [r.requestId, r]));
    for (const id of [...ids(20, 'a'), ...ids(20, 'b'), 'nul', 'bad']) assert.ok(byId.has(id), `${id} not written`);
    assert.equal(byId.get('nul')?.model, 'gpt\uFFFD-4o');
    // The refused row is in the ledger in its set-aside form, with the reason.
    const bad = byId.get('bad');
    assert.equal(bad?.errorMessage, 'set aside by the ledger: 22021: invalid byte sequence for encoding "UTF8": 0x00');
    assert.equal(bad?.prompt, null);
    assert.equal(bad?.inputTokens, 12);
    assert.deepEqual(
      { setAside: w.stats.setAside, sanitized: w.stats.sanitized, dropped: w.stats.dropped },
      { setAside: 1, sanitized: 1, dropped: 0 },
    );
    assert.ok(logs.some((l) => l.includes('record bad refused by the store') && l.includes('set aside')));
    assert.ok(logs.some((l) => l.includes('record nul had values the store cannot hold (model)')));
    // Binary split: a handful of inserts, not one per row.
    assert.ok(sink.calls <= 2 + 2 * Math.ceil(Math.log2(42)) + 1, `${sink.calls} inserts`);
    await w.close();
  });

  it('one bad record does not stop the ledger: a row refused even when set aside is dropped and logged, the rest written', async () => {
    const sink = new FakeSink();
    sink.refuse = (r) => r.requestId === 'cursed';
    const { w, logs } = writer(sink, { batchSize: 10, flushIntervalMs: 1 });
    writeAll(w, ['x1', 'cursed', 'x2']);
    await until(() => w.pending === 0, 'the batch settled');
    assert.deepEqual(sink.written.sort(), ['x1', 'x2']);
    assert.equal(w.stats.dropped, 1);
    assert.ok(logs.some((l) => l.includes('record cursed refused by the store') && l.endsWith('dropped')));
    await w.close();
  });

  it('one bad record does not stop the ledger: a connection failure while splitting keeps the whole batch for the retry', async () => {
    const sink = new FakeSink();
    let failNextSplit = true;
    sink.refuse = (r) => r.errorMessage === 'refuse me';
    const insert = sink.insert.bind(sink);
    sink.insert = async (records) => {
      // The first half of the split meets a database that just went away.
      if (records.length === 2 && failNextSplit) {
        failNextSplit = false;
        sink.failCalls = 1;
      }
      return insert(records);
    };
    const { w, logs } = writer(sink, { batchSize: 4, flushIntervalMs: 1 });
    writeAll(w, ['r0', 'r1']);
    w.write(ledgerRecord({ requestId: 'bad', errorMessage: 'refuse me' }));
    writeAll(w, ['r3']);
    await until(() => w.pending === 0, 'everything written');
    assert.deepEqual(new Set(sink.written), new Set(['r0', 'r1', 'bad', 'r3']));
    assert.equal(w.stats.setAside, 1);
    assert.ok(logs.some((l) => /failed \(connection: connect ECONNREFUSED/.test(l) && l.includes('retrying in 100 ms')));
    await w.close();
  });

  it('one bad record does not stop the ledger: an unknown error is retried, then the batch is split', async () => {
    const sink = new FakeSink();
    sink.refuse = (r) => r.errorMessage === 'refuse me';
    sink.refusal = () => new Error('something no classifier knows');
    const { w } = writer(sink, { batchSize: 10, flushIntervalMs: 1 });
    writeAll(w, ['r0']);
    w.write(ledgerRecord({ requestId: 'odd', errorMessage: 'refuse me' }));
    writeAll(w, ['r2']);
    await until(() => w.pending === 0, 'everything written', 5000);
    // Two retries with backoff (100 + 200 ms), then the split on the third failure.
    assert.equal(w.stats.failures, 2);
    assert.deepEqual(new Set(sink.written), new Set(['r0', 'odd', 'r2']));
    assert.deepEqual([w.stats.setAside, w.stats.dropped], [1, 0]);
    await w.close();
  });

  it('one bad record does not stop the ledger: the failure log says how many records are at risk', async () => {
    const sink = new FakeSink();
    sink.failCalls = 1;
    const { w, logs } = writer(sink, { batchSize: 2, flushIntervalMs: 1 });
    writeAll(w, ids(5));
    await until(() => w.pending === 0, 'everything written');
    assert.match(
      logs[0],
      /^ledger: write of 2 record\(s\) failed \(connection: connect ECONNREFUSED 127\.0\.0\.1:5432\); 5 record\(s\) at risk, held in memory only, lost if sluice stops first; retrying in 100 ms$/,
    );
    await w.close();
  });

  it('a writer started before its store only buffers; attach() writes what waited at once', async () => {
    const sink = new FakeSink();
    const { w, logs } = writer(undefined, { batchSize: 2, flushIntervalMs: 1 });
    writeAll(w, ids(3));
    await sleep(50);
    assert.equal(w.pending, 3);
    assert.equal(w.stats.failures, 0);
    // A flush waits for the store (bounded by its caller) instead of spinning.
    const flushed = w.flush();
    w.attach(sink);
    await flushed;
    assert.deepEqual(sink.written, ids(3));
    assert.deepEqual(logs, []);
    await w.close();
  });

  it('close() on a writer whose store never opened gives up in time and counts the records lost', async () => {
    const { w, logs } = writer(undefined);
    writeAll(w, ids(4));
    const start = performance.now();
    assert.deepEqual(await w.close(100), { lost: 4 });
    assert.ok(performance.now() - start < 1000);
    assert.equal(logs.at(-1), 'ledger: shutdown: 4 record(s) could not be written within 100 ms and are lost');
  });
});

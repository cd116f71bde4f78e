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
        throw new Error('connection refused');
      }
      this.batches.push(records.map((r) => r.requestId));
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

function writer(sink: LedgerSink, options: Partial<LedgerWriterOptions> = {}) {
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
    assert.deepEqual(w.stats, { pending: 5, dropped: 3, failures: 0 });
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
    assert.equal(logs.at(-1), 'ledger: 3 record(s) could not be written before shutdown');
    // No retry loop left behind to keep the process alive.
    const calls = sink.calls;
    await sleep(500);
    assert.equal(sink.calls, calls);
  });
});

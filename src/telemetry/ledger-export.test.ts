import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import type { LogRecordExporter, ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { ledgerRecord } from '../../test/helpers/ledger-records.ts';
import { LedgerExport } from './ledger-export.ts';

/** An exporter that answers every export with `code`, or never (`hang`: a collector that does not answer). */
function fakeExporter(answer: ExportResultCode | 'hang'): LogRecordExporter & { received: ReadableLogRecord[]; calls: number } {
  const received: ReadableLogRecord[] = [];
  return {
    received,
    calls: 0,
    export(logs: ReadableLogRecord[], done: (result: ExportResult) => void) {
      this.calls++;
      received.push(...logs);
      if (answer === 'hang') return;
      setImmediate(() => done(answer === ExportResultCode.SUCCESS ? { code: answer } : { code: answer, error: new Error('503') }));
    },
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
}

const settings = { batchSize: 5, maxQueue: 10, flushIntervalMs: 60_000, timeoutMs: 300, content: false, serviceName: 'test' };
const rows = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ledgerRecord({ requestId: `r${from + i}` }));

describe('LedgerExport', () => {
  it('sends every row as a log record with its attributes, and counts them once the collector accepts', async () => {
    const exporter = fakeExporter(ExportResultCode.SUCCESS);
    const ledgerExport = new LedgerExport(exporter, settings);
    ledgerExport.export(rows(3));
    await ledgerExport.shutdown(2_000);
    assert.deepEqual(
      exporter.received.map((r) => r.attributes['sluice.request_id']),
      ['r0', 'r1', 'r2'],
    );
    assert.equal(exporter.received[0].eventName, 'sluice.request');
    assert.deepEqual(exporter.received[0].hrTime, [1_760_000_000, 0], 'the time is the row start (epoch ms)');
    assert.equal(exporter.received[0].resource.attributes['service.name'], 'test');
    assert.deepEqual(ledgerExport.stats, { exported: 3, droppedQueueFull: 0, droppedFailed: 0 });
  });

  it('bounds the queue while the collector hangs: the rest is dropped and counted, nothing waits', async () => {
    const exporter = fakeExporter('hang');
    const ledgerExport = new LedgerExport(exporter, settings);
    const started = performance.now();
    ledgerExport.export(rows(100));
    assert.ok(performance.now() - started < 200, 'queuing never waits for the collector');
    assert.equal(ledgerExport.stats.droppedQueueFull, 90, 'ten fit in the queue');
    // One batch of five is handed to the hanging exporter; five stay queued, five more fit.
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(exporter.calls, 1, 'one export at a time');
    ledgerExport.export(rows(100, 100));
    assert.equal(ledgerExport.stats.droppedQueueFull, 90 + 95);
    const closing = performance.now();
    await ledgerExport.shutdown(200);
    assert.ok(performance.now() - closing < 1_000, 'shutdown is bounded by its timeout');
    assert.deepEqual(ledgerExport.stats, { exported: 0, droppedQueueFull: 185, droppedFailed: 15 });
    ledgerExport.export(rows(2));
    assert.equal(ledgerExport.stats.droppedFailed, 17, 'after shutdown, rows are counted, not queued');
  });

  it('counts a failed export as dropped and says so once, until the collector is back', async () => {
    const lines: string[] = [];
    let answer: ExportResultCode = ExportResultCode.FAILED;
    const exporter: LogRecordExporter = {
      export: (_logs, done) => void setImmediate(() => done({ code: answer, error: new Error('HTTP 500') })),
      forceFlush: () => Promise.resolve(),
      shutdown: () => Promise.resolve(),
    };
    const ledgerExport = new LedgerExport(exporter, { ...settings, batchSize: 2, log: (m) => lines.push(m) });
    ledgerExport.export(rows(2));
    ledgerExport.export(rows(2));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(ledgerExport.stats.droppedFailed, 4);
    assert.equal(lines.length, 1);
    assert.match(lines[0], /export of 2 record\(s\) failed \(HTTP 500\)/);
    answer = ExportResultCode.SUCCESS;
    ledgerExport.export(rows(2));
    await ledgerExport.shutdown(1_000);
    assert.equal(ledgerExport.stats.exported, 2);
    assert.equal(lines.length, 2);
    assert.match(lines[1], /accepts records again/);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { databaseUrl, noPostgres } from '../../test/helpers/postgres.ts';
import { SHAPE } from './generate-rows.ts';
import { formatLedgerBench, ledgerBench } from './ledger-bench.ts';

// The bench of a year's ledger (npm run bench:ledger) at a few thousand rows, so it cannot rot:
// every phase runs against the store's real code and schema, and finds what it looks for.
describe('the ledger bench at a few thousand rows', { skip: noPostgres }, () => {
  it('generates, inserts with two writers, queries, drops a month and measures', async () => {
    const result = await ledgerBench({ databaseUrl: databaseUrl ?? '', rows: 5_000, runs: 3, insertBatches: 2, log: () => {} });
    assert.equal(result.rows, 5_000 + 2 * 2 * 500);
    assert.equal(result.insert.rows, 2_000);
    const rowsOf = Object.fromEntries(result.queries.map((q) => [q.name, q.rows]));
    assert.deepEqual(rowsOf, {
      'request log, first page': 50,
      'request log, a key and a model': rowsOf['request log, a key and a model'],
      'one request by id': 1,
      'spend by project per day, 30 days': SHAPE.projects,
      'per-minute charts, 24 hours': rowsOf['per-minute charts, 24 hours'],
    });
    assert.ok(rowsOf['per-minute charts, 24 hours'] > 0, 'the minute rollups hold the last day');
    assert.ok(result.drop.partitions.length === 2 && result.drop.rows > 0 && result.drop.bytes > 0, 'the oldest months are dropped');
    assert.ok(result.rowBytes > 100 && result.bytesPerMillion.indexes > 0);
    assert.match(formatLedgerBench(result, 'npm run bench:ledger -- --rows 5000'), /\| one request by id \|/);
  });
});

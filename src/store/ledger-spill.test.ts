import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ledgerRecord } from '../../test/helpers/ledger-records.ts';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { readSpilled, removeSpilled, SpillFiles, spillRecords } from './ledger-spill.ts';
import { LedgerWriter } from './ledger-writer.ts';

function withDir(run: (dir: string) => Promise<void> | void) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-spill-'));
    try {
      await run(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

const records = (n: number, prefix = 'r') => Array.from({ length: n }, (_, i) => ledgerRecord({ requestId: `${prefix}${i}` }));
const idsOf = (rs: readonly LedgerRecord[]) => rs.map((r) => r.requestId);

describe('spill files', () => {
  it(
    'a spill reads back as written, oldest file first; journal segments and other files are not spills',
    withDir((dir) => {
      const first = spillRecords(dir, records(3, 'a'));
      const second = spillRecords(dir, records(2, 'b'));
      writeFileSync(join(dir, 'ledger-000000000001.jsonl'), `${JSON.stringify(ledgerRecord({ requestId: 'journal' }))}\n`);
      writeFileSync(join(dir, 'LOCK'), '1');
      const read = readSpilled(dir);
      assert.deepEqual(idsOf(read.records), ['a0', 'a1', 'a2', 'b0', 'b1']);
      assert.deepEqual(read.files, [first, second]);
      assert.equal(read.records[0].model, ledgerRecord({}).model);
    }),
  );

  it(
    'a line cut short (a crash during the spill) is skipped and counted; a missing directory has none',
    withDir((dir) => {
      const file = spillRecords(dir, records(2));
      appendFileSync(file, '{"requestId":"torn');
      const read = readSpilled(dir);
      assert.deepEqual(idsOf(read.records), ['r0', 'r1']);
      assert.equal(read.skipped, 1);
      assert.deepEqual(readSpilled(join(dir, 'none')), { records: [], files: [], skipped: 0 });
    }),
  );

  it(
    'removing a file another process removed first is not an error',
    withDir((dir) => {
      const file = spillRecords(dir, records(1));
      removeSpilled([file]);
      removeSpilled([file]);
      assert.deepEqual(readdirSync(dir), []);
    }),
  );
});

describe('SpillFiles', () => {
  it(
    'replays what a shutdown saved into the writer and deletes the files once their records are stored',
    withDir(async (dir) => {
      spillRecords(dir, records(4));
      const logs: string[] = [];
      const stored: string[] = [];
      const writer = new LedgerWriter(undefined, { flushIntervalMs: 1, batchSize: 3, maxBuffered: 100 });
      new SpillFiles(dir, (m) => logs.push(m)).replayInto(writer);
      assert.equal(writer.pending, 4);
      assert.match(logs[0], /^ledger: 4 record\(s\) a shutdown saved in .* while the store was unavailable; writing them$/);
      writer.attach({ insert: async (batch) => void stored.push(...idsOf(batch)) });
      await writer.flush();
      assert.deepEqual(stored, ['r0', 'r1', 'r2', 'r3']);
      assert.deepEqual(readdirSync(dir), []);
    }),
  );

  it(
    'a shutdown with the store still down saves every unwritten record in a new file, which replaces the ones read',
    withDir(async (dir) => {
      const old = spillRecords(dir, records(2, 'old'));
      const spills = new SpillFiles(dir, () => {});
      const writer = new LedgerWriter(undefined, { flushIntervalMs: 1, batchSize: 10, maxBuffered: 100, spill: spills.saver() });
      spills.replayInto(writer);
      writer.write(ledgerRecord({ requestId: 'new' }));
      assert.deepEqual(await writer.close(50), { lost: 0 });
      const read = readSpilled(dir);
      assert.deepEqual(idsOf(read.records), ['old0', 'old1', 'new']);
      assert.equal(read.files.length, 1);
      assert.notEqual(read.files[0], old);
    }),
  );
});

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { ledgerRecord } from '../../test/helpers/ledger-records.ts';
import { LedgerJournal } from './ledger-journal.ts';

const dirs: string[] = [];
function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-journal-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const records = (n: number, prefix = 'r') => Array.from({ length: n }, (_, i) => ledgerRecord({ requestId: `${prefix}${i}` }));
const segments = (dir: string) =>
  readdirSync(dir)
    .filter((n) => n.endsWith('.jsonl'))
    .sort();

describe('LedgerJournal', () => {
  it('crash windows: what was appended and not written is read back, in order, at the next open', () => {
    const dir = freshDir();
    const first = LedgerJournal.open({ dir, syncMs: 0 });
    assert.deepEqual(first.replayed, []);
    for (const r of records(5)) first.journal.append(r);
    first.journal.written(2);
    // No close(): the process died. The lock it left names this process, which counts as gone.
    const second = LedgerJournal.open({ dir, syncMs: 0 });
    // The open segment still holds all five (it is only emptied once caught up); the store
    // skips the two it has (ON CONFLICT DO NOTHING).
    assert.deepEqual(
      second.replayed.map((r) => r.requestId),
      ['r0', 'r1', 'r2', 'r3', 'r4'],
    );
    assert.deepEqual(second.replayed[0], records(1)[0]);
    second.journal.close();
  });

  it('is emptied once the store has caught up, and a clean close leaves nothing to replay', () => {
    const dir = freshDir();
    const { journal } = LedgerJournal.open({ dir, syncMs: 0 });
    for (const r of records(3)) journal.append(r);
    journal.written(3);
    const [only] = segments(dir);
    assert.equal(statSync(join(dir, only)).size, 0);
    // Appends after the truncation start again at the beginning of the file.
    journal.append(ledgerRecord({ requestId: 'later' }));
    const reopenedMidway = LedgerJournal.open({ dir: freshCopy(dir), syncMs: 0 });
    assert.deepEqual(
      reopenedMidway.replayed.map((r) => r.requestId),
      ['later'],
    );
    reopenedMidway.journal.close();
    journal.written(1);
    journal.close();
    assert.deepEqual(readdirSync(dir), []);
    const again = LedgerJournal.open({ dir, syncMs: 0 });
    assert.deepEqual(again.replayed, []);
    again.journal.close();
  });

  it('rotates segments and deletes each one whose records are all written, replaying only the rest', () => {
    const dir = freshDir();
    const { journal } = LedgerJournal.open({ dir, syncMs: 0, segmentBytes: 2000 });
    const all = records(30);
    for (const r of all) journal.append(r);
    const before = segments(dir).length;
    assert.ok(before >= 5, `${before} segments`);
    journal.written(20);
    const left = segments(dir);
    assert.ok(left.length < before);
    const { journal: reopened, replayed } = LedgerJournal.open({ dir: freshCopy(dir), syncMs: 0, segmentBytes: 2000 });
    const ids = replayed.map((r) => r.requestId);
    // Everything not yet written is there, in order; a few written ones may come along.
    assert.deepEqual(
      ids.slice(ids.indexOf('r20')),
      all.slice(20).map((r) => r.requestId),
    );
    assert.ok(ids.length < 30);
    reopened.close();
    journal.close();
  });

  it('crash windows: a line cut short by a crash and lines that are not records are skipped, and said so', () => {
    const dir = freshDir();
    writeFileSync(
      join(dir, 'ledger-000000000001.jsonl'),
      `${JSON.stringify(ledgerRecord({ requestId: 'ok1' }))}\nnot json\n{"no":"requestId"}\n${JSON.stringify(ledgerRecord({ requestId: 'ok2' }))}\n{"requestId":"torn`,
    );
    const logs: string[] = [];
    const { journal, replayed } = LedgerJournal.open({ dir, syncMs: 0, log: (m) => logs.push(m) });
    assert.deepEqual(
      replayed.map((r) => r.requestId),
      ['ok1', 'ok2'],
    );
    assert.ok(logs.some((l) => l.includes('3 unreadable line(s) skipped')));
    assert.ok(logs.some((l) => l.includes('2 record(s) not yet in the store')));
    journal.close();
  });

  it('refuses a journal another live process holds', async () => {
    const dir = freshDir();
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 10000)'], { stdio: 'ignore' });
    try {
      writeFileSync(join(dir, 'LOCK'), String(other.pid));
      assert.throws(() => LedgerJournal.open({ dir, syncMs: 0 }), new RegExp(`in use by process ${other.pid}`));
    } finally {
      other.kill('SIGKILL');
    }
    await new Promise((r) => other.once('exit', r));
    // Once that process is gone its lock is stale, and taken over.
    const { journal } = LedgerJournal.open({ dir, syncMs: 0 });
    journal.close();
  });
});

/** A copy of the journal's files in a new directory, read as the next run would (without its lock). */
function freshCopy(dir: string): string {
  const copy = freshDir();
  for (const name of segments(dir)) copyFileSync(join(dir, name), join(copy, name));
  return copy;
}

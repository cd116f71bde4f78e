import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { ledgerRecord } from '../../test/helpers/ledger-records.ts';
import type { AdmittedRequest, RequestProgress } from '../accounting/journal-entries.ts';
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

const admission = (requestId: string): AdmittedRequest => ({
  requestId,
  createdAt: 1_000,
  keyId: 'k1',
  projectId: 'p1',
  provider: 'openai',
  model: 'gpt-4o-mini',
  requestedModel: 'openai/gpt-4o-mini',
  surface: 'chat',
  streamed: true,
  promptTokens: 12,
  holds: { slots: [{ subject: 'key:k1', limit: 4 }] },
});

/** A running request as the pipeline feeds the journal: its progress moves when `advance` is called. */
function running(journal: LedgerJournal, requestId: string) {
  let progress: RequestProgress = {
    requestId,
    at: 1_000,
    provider: 'openai',
    model: 'gpt-4o-mini',
    acknowledged: false,
    firstOutputAt: null,
    outputTokens: 0,
    reported: null,
  };
  let reads = 0;
  const handle = journal.admitted(
    requestId,
    () => admission(requestId),
    () => {
      reads++;
      return progress;
    },
  );
  return {
    end: () => handle.end(),
    advance(outputTokens: number) {
      progress = { ...progress, at: progress.at + 100, acknowledged: true, firstOutputAt: 1_050, outputTokens };
    },
    get reads() {
      return reads;
    },
  };
}

const turn = () => new Promise((r) => setImmediate(r));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const lines = (dir: string) =>
  segments(dir)
    .map((n) => readFileSync(join(dir, n), 'utf8'))
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('LedgerJournal: running requests (a crash loses every request in flight)', () => {
  it('a request admitted whose record never came is unfinished at the next open, with its last progress', async () => {
    const dir = freshDir();
    const { journal } = LedgerJournal.open({ dir, syncMs: 0, progressMs: 5 });
    const a = running(journal, 'a');
    const b = running(journal, 'b');
    await turn();
    a.advance(40);
    await sleep(30);
    a.advance(90);
    await sleep(30);
    journal.append(ledgerRecord({ requestId: 'b' }));
    b.end();
    // No close: the process died.
    const next = LedgerJournal.open({ dir: freshCopy(dir), syncMs: 0 });
    assert.deepEqual(
      next.replayed.map((r) => r.requestId),
      ['b'],
    );
    assert.equal(next.unfinished.length, 1);
    assert.deepEqual(next.unfinished[0].admitted, admission('a'));
    assert.equal(next.unfinished[0].progress?.outputTokens, 90);
    next.journal.close();
    journal.close();
  });

  it('writes the admissions of a turn together at its end (or before a record), none for a request that ended in it', async () => {
    const dir = freshDir();
    const { journal } = LedgerJournal.open({ dir, syncMs: 0 });
    running(journal, 'a');
    running(journal, 'b');
    running(journal, 'quick').end();
    running(journal, 'recorded');
    journal.append(ledgerRecord({ requestId: 'recorded' }));
    assert.deepEqual(
      lines(dir).map((l) => (l.admitted as AdmittedRequest | undefined)?.requestId ?? l.requestId),
      ['a', 'b', 'recorded'],
      'the admissions still unwritten go first, with the record; none of the two that ended',
    );
    await turn();
    assert.equal(lines(dir).length, 3, 'nothing left to write at the end of the turn');
    journal.close();
  });

  it('writes progress only when it moved', async () => {
    const dir = freshDir();
    const { journal } = LedgerJournal.open({ dir, syncMs: 0, progressMs: 5 });
    const a = running(journal, 'a');
    const progressLines = () => lines(dir).filter((l) => 'progress' in l).length;
    // Waited for by polling, bounded: a loaded machine runs the 5 ms timer late, not less often.
    const until = async (done: () => boolean) => {
      for (const begun = performance.now(); !done() && performance.now() - begun < 2_000;) await sleep(5);
    };
    await until(() => a.reads > 2);
    assert.ok(a.reads > 2, 'read every progressMs');
    assert.equal(progressLines(), 1);
    a.advance(5);
    await until(() => progressLines() > 1);
    assert.equal(progressLines(), 2);
    a.end();
    journal.close();
  });

  it('is not emptied while a request runs; a new segment carries the running requests, so the older ones are deleted', async () => {
    const dir = freshDir();
    const { journal } = LedgerJournal.open({ dir, syncMs: 0, progressMs: 5, segmentBytes: 2000 });
    const a = running(journal, 'a');
    await turn();
    a.advance(7);
    await sleep(20);
    for (const r of records(30)) journal.append(r);
    journal.written(30);
    assert.equal(segments(dir).length, 1, 'the older segments are gone');
    assert.ok(statSync(join(dir, segments(dir)[0])).size > 0, 'not emptied: a request runs');
    const midway = LedgerJournal.open({ dir: freshCopy(dir), syncMs: 0 });
    assert.deepEqual(
      midway.unfinished.map((u) => [u.admitted.requestId, u.progress?.outputTokens]),
      [['a', 7]],
    );
    midway.journal.close();
    a.end();
    journal.append(ledgerRecord({ requestId: 'a' }));
    journal.written(1);
    assert.equal(statSync(join(dir, segments(dir)[0])).size, 0, 'emptied once nothing runs');
    journal.close();
  });

  it('many running requests (their lines more than a segment) do not make every write rotate', async () => {
    const dir = freshDir();
    const { journal } = LedgerJournal.open({ dir, syncMs: 0, segmentBytes: 2000 });
    const many = Array.from({ length: 40 }, (_, i) => running(journal, `run${i}`));
    await turn();
    assert.ok(statSync(join(dir, segments(dir)[0])).size > 4 * 2000, 'the admissions alone are several segments long');
    for (const r of records(40)) journal.append(r);
    // Each rotation carries the 40 on, so one comes at most per carried size of new lines (the 40
    // records are about twice that), not one per record (41 segments before the bound).
    assert.ok(segments(dir).length <= 5, `${segments(dir).length} segments`);
    journal.written(40);
    const reopened = LedgerJournal.open({ dir: freshCopy(dir), syncMs: 0 });
    assert.equal(reopened.unfinished.length, 40);
    reopened.journal.close();
    for (const r of many) r.end();
    journal.close();
  });

  it('close keeps the lines of a request still running (its record would come too late): the next start has it', async () => {
    const dir = freshDir();
    const { journal } = LedgerJournal.open({ dir, syncMs: 0 });
    running(journal, 'late');
    journal.close();
    const next = LedgerJournal.open({ dir, syncMs: 0 });
    assert.deepEqual(
      next.unfinished.map((u) => u.admitted.requestId),
      ['late'],
    );
    next.journal.close();
  });

  it('carries a request left unfinished until its row is written (idempotent across restarts); forget() drops it', () => {
    const dir = freshDir();
    const first = LedgerJournal.open({ dir, syncMs: 0 });
    running(first.journal, 'x');
    running(first.journal, 'y');
    first.journal.close();
    // A second start that wrote nothing (the store was down) carries both on.
    const second = LedgerJournal.open({ dir, syncMs: 0 });
    assert.equal(second.unfinished.length, 2);
    second.journal.written(0);
    second.journal.close();
    const third = LedgerJournal.open({ dir, syncMs: 0 });
    assert.deepEqual(third.unfinished.map((u) => u.admitted.requestId).sort(), ['x', 'y']);
    // x is recorded as interrupted; y's row turns out to be in the store already.
    third.journal.append(ledgerRecord({ requestId: 'x', outcome: 'interrupted' }));
    third.journal.forget('y');
    third.journal.written(1);
    third.journal.close();
    assert.deepEqual(readdirSync(dir), [], 'nothing left to carry or replay');
    const fourth = LedgerJournal.open({ dir, syncMs: 0 });
    assert.deepEqual([fourth.unfinished, fourth.replayed], [[], []]);
    fourth.journal.close();
  });
});

/** A copy of the journal's files in a new directory, read as the next run would (without its lock). */
function freshCopy(dir: string): string {
  const copy = freshDir();
  for (const name of segments(dir)) copyFileSync(join(dir, name), join(copy, name));
  return copy;
}

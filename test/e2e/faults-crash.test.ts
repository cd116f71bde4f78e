import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { observe } from '../helpers/observe.ts';
import {
  type ClientStream,
  FRAME_MS,
  killGroup,
  openStream,
  pacedUpstream,
  type Row,
  rowsOf,
  type Serving,
  SLOW_FRAMES,
  serve,
  sleep,
  stop,
  until,
  writeConfig,
} from './faults-crash-support.ts';

/**
 * The fault matrix's crash rows: "a crash loses every request in flight". `kill -9` of the
 * gateway, or of one of its workers, while 40 streams run through it, with the durable journal
 * on and off, then what the ledger holds for every X-Request-ID a client received. With the
 * journal: exactly one row each, `interrupted` for the streams the kill cut (their usage as far
 * as the journal's last progress line, priced), `ok` for those that finished. Without it: the
 * window docs/reliability/index.md states (the rows of the requests in flight are lost; those
 * of requests that ended before the last flush are not). Bounded: ~3 s streams, a few restarts.
 */

const STREAMS = 40;
const PROGRESS_MS = 200;

describe('crash windows: kill -9 mid-stream (a crash loses every request in flight)', { timeout: 240_000 }, () => {
  let upstream: FakeUpstream;
  const dirs: string[] = [];
  const running: Serving[] = [];
  before(async () => {
    upstream = await startFakeUpstream();
    pacedUpstream(upstream);
  });
  after(async () => {
    for (const serving of running) killGroup(serving);
    await upstream.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const tmp = () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-crash-'));
    dirs.push(dir);
    return dir;
  };
  const started = async (config: string, workers: number) => {
    const serving = await serve(config, workers);
    running.push(serving);
    return serving;
  };

  /**
   * Quick requests that finish (and reach the store: two flush intervals), then STREAMS slow ones,
   * each past its first frames and past two progress intervals: the moment of the kill.
   */
  async function load(url: string): Promise<{ quick: string[]; slow: ClientStream[] }> {
    const quick: string[] = [];
    for (let i = 0; i < 5; i++) {
      const q = openStream(url, `quick ${i}`);
      assert.equal((await q.ended).completed, true);
      quick.push(q.id as string);
    }
    await sleep(500);
    const slow = Array.from({ length: STREAMS }, (_, i) => openStream(url, `slow ${i}`));
    await until(() => slow.every((s) => s.id !== undefined && s.frames >= 3), 'every stream started');
    await sleep(2 * PROGRESS_MS + 100);
    assert.ok(
      slow.every((s) => s.frames < SLOW_FRAMES),
      'the kill comes mid-stream',
    );
    return { quick, slow };
  }

  /** Exactly one row per id, by id. */
  function rowsById(dir: string, ids: readonly string[]): Map<string, Row> {
    const rows = rowsOf(dir, ids);
    const byId = new Map(rows.map((r) => [r.request_id, r]));
    assert.equal(byId.size, rows.length, 'one row per request id');
    return byId;
  }

  function assertInterrupted(row: Row | undefined, stream: ClientStream): void {
    assert.ok(row, `${stream.id}: has its row`);
    assert.deepEqual([row.outcome, row.error_code, row.usage_source], ['interrupted', 'gateway_stopped', 'estimated']);
    assert.ok(row.input_tokens > 0, 'the prompt is charged');
    // The output the journal's last progress line counted: some, at most what the upstream sent.
    assert.ok(row.output_tokens > 0 && row.output_tokens <= 3 * SLOW_FRAMES, `${row.output_tokens} output tokens`);
    assert.ok(Math.abs(row.cost_usd - (row.input_tokens * 1 + row.output_tokens * 2) / 1e6) < 1e-12, 'priced');
  }

  it('kill -9 of the process, journal on: every X-Request-ID has exactly one row after the restart, and a second restart adds none', async () => {
    const dir = tmp();
    const journal = join(dir, 'journal');
    const config = writeConfig(dir, upstream, { journal, journal_progress_ms: PROGRESS_MS });
    const first = await started(config, 1);
    const { quick, slow } = await load(first.url);
    first.child.kill('SIGKILL');
    await first.exited;
    assert.deepEqual(
      (await Promise.all(slow.map((s) => s.ended))).filter((e) => e.completed),
      [],
    );

    const second = await started(config, 1);
    await stop(second);
    // Read once it exited: the structured log may reach the pipe after the listening line.
    assert.match(second.output(), new RegExp(`${STREAMS} request\\(s\\) were in progress when sluice stopped; recording them as interrupted`));
    const ids = [...quick, ...slow.map((s) => s.id as string)];
    const rows = rowsById(dir, ids);
    observe({ kind: 'rows', case: 'kill -9 of the process mid-stream, journal on', requests: ids.length, rows: rows.size });
    assert.equal(rows.size, ids.length, second.output());
    for (const id of quick) assert.equal(rows.get(id)?.outcome, 'ok');
    for (const s of slow) assertInterrupted(rows.get(s.id as string), s);

    const third = await started(config, 1);
    await stop(third);
    assert.doesNotMatch(third.output(), /in progress when sluice stopped/);
    assert.deepEqual(rowsById(dir, ids), rows, 'idempotent: the same rows, none added');
  });

  it('kill -9 of the process, journal off: the documented window (the rows of the streams in flight are lost, earlier ones kept)', async () => {
    const dir = tmp();
    const config = writeConfig(dir, upstream, {});
    const first = await started(config, 1);
    const { quick, slow } = await load(first.url);
    first.child.kill('SIGKILL');
    await first.exited;
    await Promise.all(slow.map((s) => s.ended));
    const second = await started(config, 1);
    await stop(second);
    const rows = rowsById(dir, [...quick, ...slow.map((s) => s.id as string)]);
    assert.deepEqual(
      quick.map((id) => rows.get(id)?.outcome),
      quick.map(() => 'ok'),
      'ended more than a flush interval before the kill: stored',
    );
    assert.equal(rows.size, quick.length, 'no row for a stream in flight: what the journal is for');
  });

  /**
   * `--workers 2`: the streams spread over both workers (the kernel picks per connection); one
   * worker is killed. The supervisor replaces it, and the replacement, opening its slot's journal,
   * records the dead worker's streams; the other worker's streams finish.
   */
  async function killOneWorker(journalOn: boolean) {
    const dir = tmp();
    const config = writeConfig(dir, upstream, journalOn ? { durable: true, journal_progress_ms: PROGRESS_MS } : {});
    const gw = await started(config, 2);
    const { quick, slow } = await load(gw.url);
    const health = (await (await fetch(`${gw.url}/healthz`)).json()) as { worker_pid: number };
    process.kill(health.worker_pid, 'SIGKILL');
    const ended = await Promise.all(slow.map((s) => s.ended));
    const cut = slow.filter((_, i) => !ended[i].completed);
    const finished = slow.filter((_, i) => ended[i].completed);
    assert.ok(cut.length > 0 && finished.length > 0, `${cut.length} streams cut, ${finished.length} finished: both workers had some`);
    return { dir, gw, quick, cut, finished };
  }

  it('kill -9 of one worker (--workers 2), journal on: its replacement records the streams it had; every X-Request-ID has exactly one row', async () => {
    const { dir, gw, quick, cut, finished } = await killOneWorker(true);
    const ids = [...quick, ...cut.map((s) => s.id as string), ...finished.map((s) => s.id as string)];
    // The replacement starts after 250 ms and records before it listens; each worker flushes every 200 ms.
    await until(() => rowsOf(dir, ids).length === ids.length, 'every row', 60_000, 200);
    assert.match(gw.output(), /worker \d killed by SIGKILL; restarting it/);
    await stop(gw);
    const rows = rowsById(dir, ids);
    observe({ kind: 'rows', case: 'kill -9 of one worker of two mid-stream, journal on', requests: ids.length, rows: rows.size });
    for (const id of quick) assert.equal(rows.get(id)?.outcome, 'ok');
    for (const s of finished) assert.equal(rows.get(s.id as string)?.outcome, 'ok');
    for (const s of cut) assertInterrupted(rows.get(s.id as string), s);
  });

  it('kill -9 of one worker (--workers 2), journal off: the killed worker loses its streams in flight, the other records its own', async () => {
    const { dir, gw, quick, cut, finished } = await killOneWorker(false);
    const done = [...quick, ...finished.map((s) => s.id as string)];
    await until(() => rowsOf(dir, done).length === done.length, 'the rows of the requests that ended', 30_000, 200);
    // The replacement is up (it answers) and two flush intervals have passed: nothing more comes.
    await until(
      () => /worker \d \(pid \d+\) listening[\s\S]*worker \d \(pid \d+\) listening[\s\S]*worker \d \(pid \d+\) listening/.test(gw.output()),
      'the replacement',
      60_000,
    );
    await sleep(2 * 200 + FRAME_MS);
    await stop(gw);
    assert.equal(
      rowsOf(
        dir,
        cut.map((s) => s.id as string),
      ).length,
      0,
      'the documented window',
    );
    assert.ok(rowsOf(dir, done).every((r) => r.outcome === 'ok'));
  });
});

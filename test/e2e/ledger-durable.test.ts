import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/store/open-database.ts';

const bin = fileURLToPath(new URL('../../bin/sluice.js', import.meta.url));

interface Running {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** `sluice serve` in a child process (so it can be SIGKILLed), on an ephemeral port. */
async function serve(config: string): Promise<Running> {
  // No DATABASE_URL: the embedded SQLite file of the config, whatever the test run has set. One
  // process: these are one process's crash windows and its journal (each worker has its own).
  const child = spawn(process.execPath, [bin, 'serve', '--config', config, '--workers', '1'], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (out += b.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sluice did not start:\n${out}`)), 20_000);
    const check = () => {
      const match = /sluice listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        child.stdout?.off('data', check);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => reject(new Error(`sluice exited (${code}):\n${out}`)));
  });
  return { child, url, output: () => out };
}

async function kill(running: Running, signal: NodeJS.Signals): Promise<void> {
  const exited = new Promise((r) => running.child.once('exit', r));
  running.child.kill(signal);
  await exited;
}

async function streamOne(url: string, n: number): Promise<string> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock/echo', stream: true, messages: [{ role: 'user', content: `request ${n}` }] }),
  });
  assert.equal(res.status, 200);
  assert.ok((await res.text()).endsWith('data: [DONE]\n\n'));
  const id = res.headers.get('x-request-id');
  assert.ok(id);
  return id;
}

/** Waits (up to 5 s) until every id has a line in the journal's segment files. */
async function journaled(dir: string, ids: string[]): Promise<void> {
  for (const deadline = Date.now() + 5_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 10))) {
    const recorded = new Set<unknown>();
    for (const f of readdirSync(dir).filter((name) => name.endsWith('.jsonl'))) {
      for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
        // A record is a line of its own; a running request's `admitted` and `progress` lines name
        // its id too, and do not count (a kill then makes it an interrupted row, not its record).
        const entry = line ? (JSON.parse(line) as { requestId?: unknown; admitted?: unknown; progress?: unknown }) : {};
        if (entry.admitted === undefined && entry.progress === undefined) recorded.add(entry.requestId);
      }
    }
    if (ids.every((id) => recorded.has(id))) return;
  }
  throw new Error('the records did not reach the journal within 5 s');
}

/** How many of `ids` have a row in the SQLite file (read directly: the gateway is stopped). */
async function present(path: string, ids: string[]): Promise<number> {
  const { db, close } = await openDatabase({ path });
  try {
    const rows = await db.selectFrom('ledger').select('request_id').where('request_id', 'in', ids).execute();
    return rows.length;
  } finally {
    await close();
  }
}

/**
 * N requests, SIGKILL right after the last answer, restart, count the rows. The flush interval is
 * a minute and the batch larger than N, so nothing reaches the store before the kill: only the
 * journal can bring the rows back.
 */
async function killAndRestart(dir: string, ledger: Record<string, unknown>, n: number) {
  const config = join(dir, 'sluice.json');
  writeFileSync(
    config,
    JSON.stringify({
      server: { port: 0, host: '127.0.0.1' },
      store: { path: join(dir, 'sluice.db') },
      ledger: { flush_interval_ms: 60_000, batch_size: 10_000, ...ledger },
    }),
  );
  const first = await serve(config);
  const ids: string[] = [];
  try {
    for (let i = 0; i < n; i++) ids.push(await streamOne(first.url, i));
    // A record reaches the journal when the lifecycle hands it to the ledger, just after the
    // response's last byte (its usage is settled then): the journal's guarantee starts there, so the
    // kill waits for the hand-off (bounded), as a crash a moment later would.
    if (typeof ledger.journal === 'string') await journaled(ledger.journal, ids);
  } finally {
    await kill(first, 'SIGKILL');
  }
  // The restart writes what the journal holds; its graceful stop flushes.
  const second = await serve(config);
  await kill(second, 'SIGTERM');
  return { ids, found: await present(join(dir, 'sluice.db'), ids), output: second.output() };
}

describe('crash windows: durable ledger mode', () => {
  const dirs: string[] = [];
  const tmp = () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-durable-'));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('crash windows: SIGKILL with the journal on loses no ledger row (replayed at restart)', async () => {
    const dir = tmp();
    const journal = join(dir, 'journal');
    const { ids, found, output } = await killAndRestart(dir, { journal, journal_sync_ms: 100 }, 40);
    assert.equal(found, ids.length, output);
    assert.match(output, new RegExp(`ledger: journal ${journal}: ${ids.length} record\\(s\\) not yet in the store, writing them first`));
    // Written, so the journal was emptied and closed cleanly by the SIGTERM.
    assert.deepEqual(readdirSync(journal), [], output);
  });

  it('crash windows: without the journal the same SIGKILL loses the buffered rows (what the mode is for)', async () => {
    const dir = tmp();
    const { found } = await killAndRestart(dir, {}, 10);
    assert.equal(found, 0);
  });
});

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

interface Started {
  npm: ChildProcess;
  url: string;
  stdout: () => string;
  exited: Promise<number | null>;
}

/**
 * `npm start` exactly as a user or a process supervisor runs it, in its own process group, with a
 * throwaway SQLite store whose ledger flushes only at shutdown: a row in the file afterwards
 * proves sluice drained and closed its store instead of being killed or left running.
 */
function startNpm(dir: string): Promise<Started> {
  const config = join(dir, 'sluice.yaml');
  writeFileSync(config, `store:\n  path: ${join(dir, 'sluice.db')}\nledger:\n  flush_interval_ms: 600000\n`);
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    // A clean environment: no DATABASE_URL (the store must be the file above), no provider keys.
    env: { PATH: `${join(root, 'node_modules/.bin')}:${process.env.PATH}`, HOME: process.env.HOME, PORT: '0', SLUICE_CONFIG: config },
  });
  let out = '';
  let err = '';
  npm.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  npm.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let listening = false;
    // Generous: about 2 s on a quiet machine, far more while other test files load the cores.
    const timer = setTimeout(() => fail(new Error(`no "listening" line within 45 s:\n${out}${err}`)), 45_000);
    const fail = (e: Error) => {
      if (listening) return;
      clearTimeout(timer);
      kill(npm);
      reject(e);
    };
    void exited.then((code) => fail(new Error(`npm start exited (${code}) before listening:\n${out}${err}`)));
    npm.stdout?.on('data', () => {
      const match = /sluice listening on (http:\/\/\S+)/.exec(out);
      if (listening || !match) return;
      listening = true;
      clearTimeout(timer);
      resolve({ npm, url: match[1], stdout: () => out + err, exited });
    });
  });
}

/** Whatever a failed assertion left behind dies with the test. */
function kill(child: ChildProcess): void {
  try {
    process.kill(-(child.pid as number), 'SIGKILL');
  } catch {
    // Already gone.
  }
}

function chat(url: string, model: string, stream: boolean): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }] }),
  });
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// Concurrent: each case is mostly waiting (npm and sluice starting, a slow stream).
describe('a signal to `npm start` drains and stops sluice (not only npm)', { concurrency: true }, () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  after(() => {
    for (const child of children) kill(child);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const cases = [
    { name: 'SIGTERM to the npm process (a supervisor, docker stop)', signal: 'SIGTERM', group: false },
    { name: 'SIGINT to the npm process', signal: 'SIGINT', group: false },
    // The terminal signals the whole process group, so sluice gets it from there and again from npm.
    { name: 'Ctrl-C: SIGINT to the whole process group', signal: 'SIGINT', group: true },
  ] as const;

  for (const { name, signal, group } of cases) {
    it(name, { timeout: 90_000 }, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-signals-'));
      dirs.push(dir);
      const { npm, url, stdout, exited } = await startNpm(dir);
      children.push(npm);

      const done = await chat(url, 'mock/echo', false);
      assert.equal(done.status, 200);
      await done.json();
      // mock/slow sends a token every 500 ms: still streaming when the signal arrives.
      const open = await chat(url, 'mock/slow', true);
      assert.equal(open.status, 200);
      const ids = [done.headers.get('x-request-id'), open.headers.get('x-request-id')];

      process.kill(group ? -(npm.pid as number) : (npm.pid as number), signal);

      const body = await within(open.text(), 15_000, 'the open stream');
      assert.match(body, /"content":"hi"/);
      assert.match(body, /"finish_reason":"stop"/);
      assert.ok(body.endsWith('data: [DONE]\n\n'), body.slice(-200));
      assert.equal(await within(exited, 15_000, 'npm exit'), 0, stdout());
      assert.match(stdout(), new RegExp(`${signal}: draining open streams`));
      assert.doesNotMatch(stdout(), /stopping now/);
      await assert.rejects(fetch(`${url}/v1/models`), 'the port is closed');

      const db = new DatabaseSync(join(dir, 'sluice.db'), { readOnly: true });
      try {
        const rows = db.prepare('SELECT request_id, model, outcome FROM ledger ORDER BY created_at, request_id').all();
        assert.deepEqual(
          rows.map((r) => ({ ...r })),
          [
            { request_id: ids[0], model: 'echo', outcome: 'ok' },
            { request_id: ids[1], model: 'slow', outcome: 'ok' },
          ],
        );
      } finally {
        db.close();
      }
    });
  }
});

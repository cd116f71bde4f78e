import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const node = join(root, 'node_modules/.bin/node');
const sluice = join(root, 'bin/sluice.js');

interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** `sluice serve --workers N` in its own process group, reading `config`; resolves once it announces the port. */
function serve(config: string, workers: string): Promise<Started> {
  const child = spawn(node, [sluice, 'serve', '--workers', workers], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: '0', SLUICE_CONFIG: config },
  });
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (out += d));
  return new Promise((resolve, reject) => {
    // Each process loads the whole gateway: seconds on a quiet machine, far more on a loaded one.
    const timer = setTimeout(() => reject(new Error(`not listening within 90 s:\n${out}`)), 90_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before listening:\n${out}`));
    });
    child.stdout?.on('data', () => {
      const match = /sluice listening on (http:\/\/\S+)/.exec(out);
      if (!match) return;
      clearTimeout(timer);
      resolve({ child, url: match[1], output: () => out });
    });
  });
}

function kill(child: ChildProcess): void {
  try {
    process.kill(-(child.pid as number), 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Until `pattern` has appeared `count` times in the output (bounded). */
async function waitFor(started: Started, pattern: RegExp, count = 1): Promise<void> {
  const global = new RegExp(pattern.source, 'g');
  for (let i = 0; i < 300; i++) {
    if ((started.output().match(global)?.length ?? 0) >= count) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${pattern} not seen ${count} time(s) within 30 s:\n${started.output()}`);
}

const chat = (url: string, model: string, stream: boolean) =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    // A new connection each: under workers, any worker may answer.
    headers: { 'content-type': 'application/json', connection: 'close' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'one two three four' }] }),
  });

/** `talk` is the alias the reload moves: to mock/slow, then to mock/error. */
const configText = (talk: string, extra = '') =>
  `store:\n  path: ':memory:'\nlog:\n  level: info\n  format: json\nmodel_list:\n  - model_name: talk\n    model: ${talk}\n${extra}`;

describe('reloading the config with SIGHUP', { concurrency: true, timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-sighup-'));
  const children: ChildProcess[] = [];
  after(() => {
    for (const child of children) kill(child);
    rmSync(dir, { recursive: true, force: true });
  });

  it('sluice serve: an open stream finishes on its old target, the next request sees the new one; a bad file is refused and logged', async () => {
    const config = join(dir, 'one.yaml');
    writeFileSync(config, configText('mock/slow'));
    const gw = await serve(config, '1');
    children.push(gw.child);

    // mock/slow sends a word every 500 ms: still streaming when the signal arrives.
    const open = await chat(gw.url, 'talk', true);
    assert.equal(open.status, 200);
    writeFileSync(config, configText('mock/error'));
    process.kill(gw.child.pid as number, 'SIGHUP');
    await waitFor(gw, /"changed":\["model_list"\],"msg":"config reloaded"/);

    const moved = await chat(gw.url, 'talk', false);
    assert.notEqual(moved.status, 200, 'talk now names mock/error');
    const body = await open.text();
    assert.match(body, /"content":"[^"]*four/);
    assert.match(body, /"finish_reason":"stop"/);
    assert.ok(body.endsWith('data: [DONE]\n\n'), body.slice(-200));

    writeFileSync(config, `${configText('mock/echo')}routes:\n  smart:\n    targets:\n      - model: groq/llama\n`);
    process.kill(gw.child.pid as number, 'SIGHUP');
    await waitFor(gw, /provider 'groq' is not configured.*"msg":"config reload refused: the running config is kept"/);
    assert.notEqual((await chat(gw.url, 'talk', false)).status, 200, 'still the running config: talk names mock/error');
    assert.equal(gw.child.exitCode, null, 'still serving');
  });

  it('sluice serve --workers 2: SIGHUP to the supervisor reloads every worker, each result logged; POST /admin/reload reaches them all', async () => {
    const config = join(dir, 'workers.yaml');
    writeFileSync(config, configText('mock/echo'));
    const gw = await serve(config, '2');
    children.push(gw.child);

    writeFileSync(config, configText('mock/error', 'stream:\n  heartbeat_s: 5\n'));
    process.kill(gw.child.pid as number, 'SIGHUP');
    await waitFor(gw, /SIGHUP: worker \d \(pid \d+\) reloaded the config: stream\.heartbeat_s, model_list changed/, 2);
    assert.match(gw.output(), /SIGHUP: worker 0 \(pid \d+\) reloaded/);
    assert.match(gw.output(), /SIGHUP: worker 1 \(pid \d+\) reloaded/);
    // Whichever worker answers, it has the new alias.
    for (let i = 0; i < 6; i++) assert.notEqual((await chat(gw.url, 'talk', false)).status, 200);

    // PORT is set in the environment (it wins over the file): the drain time is the key that waits here.
    writeFileSync(config, configText('mock/echo', 'server:\n  drain_timeout_s: 5\n'));
    const res = await fetch(`${gw.url}/admin/reload`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', connection: 'close' },
      body: '{}',
    });
    const answer = (await res.json()) as { changed: string[]; restart_required: string[]; workers: { worker: number }[] };
    assert.equal(res.status, 200, JSON.stringify(answer));
    assert.deepEqual(answer.changed.toSorted(), ['model_list', 'stream.heartbeat_s']);
    assert.deepEqual(answer.restart_required, ['server.drain_timeout_s']);
    assert.deepEqual(
      answer.workers.map((w) => w.worker),
      [0, 1],
    );
    await waitFor(gw, /POST \/admin\/reload: worker \d \(pid \d+\) reloaded the config: .*; until a restart: server\.drain_timeout_s/, 2);
    for (let i = 0; i < 6; i++) assert.equal((await chat(gw.url, 'talk', false)).status, 200);

    writeFileSync(config, 'server:\n  prot: 1\n');
    const refused = await fetch(`${gw.url}/admin/reload`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', connection: 'close' },
      body: '{}',
    });
    const error = ((await refused.json()) as { error: { code: string; message: string } }).error;
    assert.equal(refused.status, 422);
    assert.equal(error.code, 'config_invalid');
    assert.match(error.message, /unknown key server\.prot \(did you mean server\.port\?\) \(workers 0, 1 refused it\)$/);

    // Counted in every worker, summed by the scrape of any one.
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { connection: 'close' } })).text();
    assert.match(metrics, /^sluice_config_reloads_total\{result="ok"\} 4$/m);
    assert.match(metrics, /^sluice_config_reloads_total\{result="refused"\} 2$/m);
  });
});

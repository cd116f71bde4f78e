import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const node = join(root, 'node_modules/.bin/node');
const sluice = join(root, 'bin/sluice.js');

interface Started {
  primary: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/** `sluice serve --workers N` in its own process group, with the given config; resolves once it announces the port. */
function startWorkers(dir: string, workers: string, configText: string, env: NodeJS.ProcessEnv = {}): Promise<Started> {
  const config = join(dir, 'sluice.yaml');
  writeFileSync(config, configText);
  const primary = spawn(node, [sluice, 'serve', '--workers', workers], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: '0', SLUICE_CONFIG: config, ...env },
  });
  let out = '';
  primary.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  primary.stderr?.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((resolve) => primary.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    // Each worker loads the whole gateway: seconds on a quiet machine, far more on a loaded one.
    const timer = setTimeout(() => reject(new Error(`not listening within 90 s:\n${out}`)), 90_000);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`exited (${code}) before listening:\n${out}`), { code, output: out }));
    });
    primary.stdout?.on('data', () => {
      const match = /sluice listening on (http:\/\/\S+)/.exec(out);
      if (!match) return;
      clearTimeout(timer);
      resolve({ primary, url: match[1], output: () => out, exited });
    });
  });
}

/** `sluice serve --workers N` that must refuse to start: its exit code, output and how long it took. */
function startRefused(
  dir: string,
  workers: string,
  configText: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; output: string; ms: number }> {
  const config = join(dir, `refused-${Date.now()}.yaml`);
  writeFileSync(config, configText);
  const started = Date.now();
  const child = spawn(node, [sluice, 'serve', '--workers', workers], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: '0', SLUICE_CONFIG: config, ...env },
  });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (output += d));
  return new Promise((resolve) => {
    // Bounded: a supervisor that never exits is killed (and the test then fails on its exit code).
    const timer = setTimeout(() => kill(child), 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output, ms: Date.now() - started });
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

/** One request on the given agent's connection (or a fresh one), as { status, headers, body }. */
function call(
  url: string,
  path: string,
  options: { agent?: Agent; method?: string; body?: unknown; key?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const target = new URL(path, url);
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      {
        method: options.method ?? 'GET',
        agent: options.agent ?? false,
        headers: {
          ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  });
}

async function workerPid(url: string, agent?: Agent): Promise<number> {
  const health = await call(url, '/healthz', { agent });
  return (JSON.parse(health.body) as { worker_pid: number }).worker_pid;
}

/** Fresh connections until `count` distinct workers have answered (the kernel picks by the connection's ports). */
async function pidsAnswering(url: string, count: number): Promise<Set<number>> {
  const pids = new Set<number>();
  for (let i = 0; i < 200 && pids.size < count; i++) pids.add(await workerPid(url));
  return pids;
}

/** As pidsAnswering, where a connection may be reset: one the kernel had queued for a worker just killed. */
async function pidsAnsweringThroughResets(url: string, count: number): Promise<Set<number>> {
  for (;;) {
    try {
      return await pidsAnswering(url, count);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') throw err;
    }
  }
}

/** Two keep-alive connections that landed on different workers. */
async function connectionsOnTwoWorkers(url: string): Promise<[Agent, Agent]> {
  const first = new Agent({ keepAlive: true, maxSockets: 1 });
  const pid = await workerPid(url, first);
  for (let i = 0; i < 200; i++) {
    const second = new Agent({ keepAlive: true, maxSockets: 1 });
    if ((await workerPid(url, second)) !== pid) return [first, second];
    second.destroy();
  }
  throw new Error('no connection reached a second worker in 200 tries');
}

function chatBody(model: string, stream: boolean) {
  return { model, stream, messages: [{ role: 'user', content: 'hi' }] };
}

describe('sluice serve --workers 2', { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-workers-'));
  let gw: Started;
  const agents: Agent[] = [];
  before(async () => {
    gw = await startWorkers(dir, '2', `store:\n  path: ${join(dir, 'sluice.db')}\nlog:\n  level: warn\n`);
  });
  after(() => {
    for (const agent of agents) agent.destroy();
    if (gw) kill(gw.primary);
    rmSync(dir, { recursive: true, force: true });
  });

  it('both workers answer on the one port', async () => {
    assert.equal((await pidsAnswering(gw.url, 2)).size, 2);
  });

  it('a second `sluice serve --workers 2` on its port refused, exits non-zero within seconds and never serves (5 of 12 requests went to it)', async () => {
    const port = new URL(gw.url).port;
    const first = await pidsAnswering(gw.url, 2);
    // Another config: a master key, so any answer of the second gateway would be a 401.
    const second = startRefused(dir, '2', `store:\n  path: ${join(dir, 'second.db')}\nauth:\n  master_key: sk-second\n`, {
      PORT: port,
    });
    // Requests on fresh connections for as long as the second one lives, and a while after.
    let exited = false;
    void second.then(() => (exited = true));
    const answers: { status: number; pid: number }[] = [];
    for (let i = 0; i < 400 && (!exited || answers.length < 24); i++) {
      const models = await call(gw.url, '/v1/models');
      answers.push({ status: models.status, pid: await workerPid(gw.url) });
    }
    const { code, output, ms } = await second;
    assert.notEqual(code, 0, output);
    assert.ok(ms < 20_000, `exited after ${ms} ms`);
    assert.match(
      output,
      new RegExp(`^sluice: port ${port} is already served by sluice \\(pid ${gw.primary.pid}\\): .*Stop that one first, or pick another port`),
    );
    assert.doesNotMatch(output, /worker \d .*listening/);
    assert.ok(answers.length >= 24);
    assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
    assert.ok(
      answers.every((a) => first.has(a.pid)),
      'a request reached another process',
    );
  });

  it('says at start, as one process does, the providers it serves and that it serves without auth', async () => {
    // The supervisor prints them after its listening line, from the first worker's report.
    for (let i = 0; i < 50 && !gw.output().includes('serving without auth'); i++) await new Promise((r) => setTimeout(r, 20));
    assert.match(gw.output(), /sluice listening on http:\/\/\S+ \(2 workers\)\nproviders: mock\nno SLUICE_MASTER_KEY set: serving without auth/);
  });

  it('a request is found in the request log from the other worker, on a keep-alive connection', async () => {
    const [a, b] = await connectionsOnTwoWorkers(gw.url);
    agents.push(a, b);
    const done = await call(gw.url, '/v1/chat/completions', { agent: a, method: 'POST', body: chatBody('mock/echo', false) });
    assert.equal(done.status, 200);
    const id = done.headers['x-request-id'] as string;
    // Right away, on the other worker: it waits for the row (polling the store for up to two flush intervals).
    const found = await call(gw.url, `/v1/requests/${id}`, { agent: b });
    assert.equal(found.status, 200, found.body);
    assert.equal((JSON.parse(found.body) as { request_id: string }).request_id, id);
  });

  it('a stored response is continued through the other worker at once (previous_response_id)', async () => {
    const [a, b] = await connectionsOnTwoWorkers(gw.url);
    agents.push(a, b);
    // Without waiting for the other worker's save, 49 of 300 such continuations missed (responses-store.ts).
    for (let i = 0; i < 20; i++) await continueOnOther(a, b);
  });

  async function continueOnOther(a: Agent, b: Agent): Promise<void> {
    const first = await call(gw.url, '/v1/responses', { agent: a, method: 'POST', body: { model: 'mock/echo', input: 'hello' } });
    assert.equal(first.status, 200, first.body);
    const { id } = JSON.parse(first.body) as { id: string };
    const next = await call(gw.url, '/v1/responses', {
      agent: b,
      method: 'POST',
      body: { model: 'mock/echo', input: 'again', previous_response_id: id },
    });
    assert.equal(next.status, 200, next.body);
    assert.equal((JSON.parse(next.body) as { previous_response_id: string }).previous_response_id, id);
    const read = await call(gw.url, `/v1/responses/${id}`, { agent: b });
    assert.equal(read.status, 200, read.body);
  }

  it('both workers write the one SQLite ledger under load: every request has its row, counted once in the rollups, no write fails', async () => {
    const total = 400;
    const ids: string[] = [];
    for (let round = 0; round < total / 50; round++) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => call(gw.url, '/v1/chat/completions', { method: 'POST', body: chatBody('mock/echo', false) })),
      );
      for (const answer of answers) {
        assert.equal(answer.status, 200, answer.body);
        ids.push(answer.headers['x-request-id'] as string);
      }
    }
    // Each worker's writer flushes every 200 ms; the last batches land within a few intervals.
    for (let waited = 0; rowsOf(dir, ids) < total && waited < 20_000; waited += 100) await sleep(100);
    assert.equal(rowsOf(dir, ids), total);
    assert.doesNotMatch(gw.output(), /database is locked|SQLITE_BUSY|ledger: .*failed/i);
    // Both workers add to the same rollup rows, in their batches' transactions: the sums are the ledger's.
    const totals = rollupTotals(dir);
    assert.equal(totals.ledger, totals.minutes);
    assert.equal(totals.ledger, totals.hours);
  });

  it('one scrape of /metrics, on either worker, sums every worker: counters, histograms and gauges', async () => {
    const [a, b] = await connectionsOnTwoWorkers(gw.url);
    agents.push(a, b);
    const scrape = async (agent: Agent) => {
      const res = await call(gw.url, '/metrics', { agent });
      assert.equal(res.status, 200, res.body);
      return res.body;
    };
    const before = sum(await scrape(a), 'sluice_requests_total', 'model="echo"');
    assert.equal(sum(await scrape(b), 'sluice_requests_total', 'model="echo"'), before, 'both workers answer the same total');
    for (const agent of [a, a, a, b, b, b]) {
      const done = await call(gw.url, '/v1/chat/completions', { agent, method: 'POST', body: chatBody('mock/echo', false) });
      assert.equal(done.status, 200, done.body);
    }
    // A request is counted just after its response ended: a scrape may come a moment before that.
    const text = await waitFor(async () => {
      const body = await scrape(a);
      return sum(body, 'sluice_requests_total', 'model="echo"') === before + 6 ? body : undefined;
    }, 10_000);
    assert.equal(sum(text, 'sluice_request_duration_seconds_count', 'model="echo"'), before + 6, 'histograms are merged');
    assert.equal(sum(text, 'sluice_request_duration_seconds_bucket', 'le="+Inf"', 'model="echo"'), before + 6);
    assert.equal(sum(await scrape(b), 'sluice_requests_total', 'model="echo"'), before + 6);
    // A stream open on one worker is in the gauge the other answers (mock/echo sends a word every
    // 15 ms: 300 words take seconds; mock/slow is left to the drain test, which counts its rows).
    const long = { ...chatBody('mock/echo', true), messages: [{ role: 'user', content: 'word '.repeat(300) }] };
    const open = call(gw.url, '/v1/chat/completions', { agent: a, method: 'POST', body: long });
    const streaming = await waitFor(async () => (sum(await scrape(b), 'sluice_open_streams') === 1 ? true : undefined), 10_000);
    assert.equal(streaming, true);
    assert.match((await open).body, /data: \[DONE\]/);
  });

  it('revocation lags across instances (issue 25): a key revoked through one worker is refused by the other within 1 s, its cache told through the supervisor', async () => {
    const [a, b] = await connectionsOnTwoWorkers(gw.url);
    agents.push(a, b);
    const admin = (path: string, body: unknown) => call(gw.url, path, { agent: a, method: 'POST', body });
    assert.equal((await admin('/admin/projects', { id: 'workers', name: 'Workers' })).status, 201);
    const created = await admin('/admin/keys', { project: 'workers' });
    assert.equal(created.status, 201, created.body);
    const { id, key } = JSON.parse(created.body) as { id: string; key: string };
    const onB = async () =>
      (await call(gw.url, '/v1/chat/completions', { agent: b, method: 'POST', body: chatBody('mock/echo', false), key })).status;
    assert.equal(await onB(), 200, 'the other worker knows the key (and caches it for 10 s)');
    assert.equal((await admin(`/admin/keys/${id}/revoke`, {})).status, 200);
    const revokedAt = Date.now();
    let status = await onB();
    while (status === 200 && Date.now() - revokedAt < 5_000) {
      await sleep(20);
      status = await onB();
    }
    assert.equal(status, 401);
    assert.ok(Date.now() - revokedAt < 1_000, `the other worker refused it after ${Date.now() - revokedAt} ms`);
  });

  it('a killed worker is replaced under a new pid, and the port keeps answering', async () => {
    const pids = await pidsAnswering(gw.url, 2);
    const [victim] = pids;
    process.kill(victim, 'SIGKILL');
    const replaced = await waitFor(async () => {
      const now = await pidsAnsweringThroughResets(gw.url, 2);
      return now.size === 2 && !now.has(victim) ? now : undefined;
    }, 60_000);
    assert.equal(replaced.size, 2);
    assert.match(gw.output(), /worker \d killed by SIGKILL; restarting it in \d+ ms/);
  });

  it('SIGTERM to the supervisor drains every worker: an open stream ends with [DONE], then every process exits 0', async () => {
    // mock/slow sends a token every 500 ms: still streaming when the signal arrives.
    const open = call(gw.url, '/v1/chat/completions', { method: 'POST', body: chatBody('mock/slow', true) });
    await sleep(300);
    process.kill(gw.primary.pid as number, 'SIGTERM');
    const body = (await open).body;
    assert.match(body, /"finish_reason":"stop"/);
    assert.ok(body.endsWith('data: [DONE]\n\n'), body.slice(-200));
    assert.equal(await gw.exited, 0, gw.output());
    assert.match(gw.output(), /SIGTERM: draining 2 workers/);
    assert.equal(gw.output().match(/SIGTERM: draining open streams/g)?.length, 2);
    await assert.rejects(fetch(`${gw.url}/healthz`), 'the port is closed');
    const db = new DatabaseSync(join(dir, 'sluice.db'), { readOnly: true });
    try {
      const slow = db.prepare(`SELECT outcome FROM ledger WHERE model = 'slow'`).all();
      assert.deepEqual(
        slow.map((r) => r.outcome),
        ['ok'],
      );
    } finally {
      db.close();
    }
  });
});

describe('sluice serve --workers 2 that cannot start', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-workers-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('another program holds the port: says so and exits at once (it hung for 30 s "draining")', async () => {
    const busy = createServer().listen(0, '127.0.0.1');
    await once(busy, 'listening');
    try {
      const port = String((busy.address() as AddressInfo).port);
      const { code, output, ms } = await startRefused(dir, '2', `store:\n  path: ${join(dir, 'busy.db')}\n`, { PORT: port });
      assert.equal(code, 1, output);
      assert.ok(ms < 20_000, `exited after ${ms} ms`);
      assert.equal(
        output,
        `sluice: 127.0.0.1:${port} is already in use: stop what is listening there, or pick another port with --port (or PORT).\n`,
      );
    } finally {
      busy.close();
    }
  });

  it('a route whose target provider is not enabled started silently: refused at start naming the route and the provider; the worker that refused exits, and so does the supervisor', async () => {
    const routes = 'routes:\n  smart:\n    targets:\n      - model: mock/echo\n      - model: anthropic/claude-sonnet-4-5\n';
    const { code, output, ms } = await startRefused(dir, '2', `store:\n  path: ${join(dir, 'routes.db')}\n${routes}`);
    assert.equal(code, 1, output);
    assert.ok(ms < 60_000, `exited after ${ms} ms`);
    assert.match(
      output,
      /^sluice: routes\.smart\.targets\[1\] \(anthropic\/claude-sonnet-4-5\): provider 'anthropic' is not configured: set ANTHROPIC_API_KEY or add it to the config file\.$/m,
    );
  });
});

describe('sluice serve --workers 2 with the durable ledger', () => {
  it('gives each worker a journal of its own (one shared journal would refuse the second)', { timeout: 180_000 }, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-workers-'));
    const gw = await startWorkers(dir, '2', `store:\n  path: ${join(dir, 'sluice.db')}\nlog:\n  level: warn\nledger:\n  durable: true\n`);
    t.after(() => {
      kill(gw.primary);
      rmSync(dir, { recursive: true, force: true });
    });
    const pids = await pidsAnswering(gw.url, 2);
    const owners = ['worker-0', 'worker-1'].map((slot) => Number(readFileSync(join(dir, 'ledger-journal', slot, 'LOCK'), 'utf8')));
    assert.deepEqual(new Set(owners), pids);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const done = await call(gw.url, '/v1/chat/completions', { method: 'POST', body: chatBody('mock/echo', false) });
      assert.equal(done.status, 200, done.body);
      ids.push(done.headers['x-request-id'] as string);
    }
    process.kill(gw.primary.pid as number, 'SIGTERM');
    assert.equal(await gw.exited, 0, gw.output());
    assert.equal(rowsOf(dir, ids), ids.length);
  });
});

describe('sluice serve --workers 2 with tiers that limit', () => {
  const LIMIT = 20;
  const tiers = `tiers:\n  free:\n    requests_per_minute: ${LIMIT}\ndefault_tier: free\n`;

  it(
    `holds a key to ${LIMIT} requests a minute across both workers through Redis`,
    { timeout: 180_000, skip: process.env.REDIS_URL ? false : 'REDIS_URL not set' },
    async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-workers-'));
      const master = 'sk-master-workers-test';
      const gw = await startWorkers(
        dir,
        '2',
        `store:\n  path: ${join(dir, 'sluice.db')}\nlog:\n  level: warn\n${tiers}` +
          `auth:\n  master_key: ${master}\n  key_pepper: workers-test-pepper\n` +
          `limits:\n  redis_prefix: "sluice-test:${process.pid}:${Date.now()}:"\n  redis_timeout_ms: 2000\n`,
        { REDIS_URL: process.env.REDIS_URL },
      );
      t.after(() => {
        kill(gw.primary);
        rmSync(dir, { recursive: true, force: true });
      });
      assert.equal((await pidsAnswering(gw.url, 2)).size, 2);
      const admin = async (path: string, body: unknown) => {
        const res = await fetch(`${gw.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${master}` },
          body: JSON.stringify(body),
        });
        assert.equal(res.status, 201, await res.clone().text());
        return (await res.json()) as Record<string, string>;
      };
      await admin('/admin/projects', { id: 'team', name: 'Team', tier: 'free' });
      const { key } = await admin('/admin/keys', { project: 'team' });
      // Each request on a fresh connection: the kernel spreads them over both workers.
      const statuses: number[] = [];
      const started = Date.now();
      for (let i = 0; i < 2 * LIMIT; i++) {
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, connection: 'close' },
          body: JSON.stringify(chatBody('mock/echo', false)),
        });
        await res.arrayBuffer();
        statuses.push(res.status);
      }
      const refilled = Math.floor((LIMIT * (Date.now() - started)) / 60_000);
      const ok = statuses.filter((s) => s === 200).length;
      assert.equal(ok + statuses.filter((s) => s === 429).length, 2 * LIMIT, `statuses: ${[...new Set(statuses)]}`);
      assert.ok(ok >= LIMIT && ok <= LIMIT + refilled, `${ok} admitted for a limit of ${LIMIT} (${refilled} refilled meanwhile)`);
    },
  );

  it('refuses to start without Redis, saying why and what to do', { timeout: 90_000 }, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-workers-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const error = await startWorkers(dir, '2', `store:\n  path: ${join(dir, 'sluice.db')}\n${tiers}`).then(
      (gw) => {
        kill(gw.primary);
        throw new Error('started');
      },
      (err: { code: number; output: string }) => err,
    );
    assert.equal(error.code, 1);
    assert.match(error.output, /tier\(s\) free are kept in each process's memory.*set REDIS_URL/);
  });
});

/** The sum of a metric's samples whose line holds every one of `labels` (Prometheus' text format). */
function sum(text: string, name: string, ...labels: string[]): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const match = /^(\S+?)(\{.*\})? (\S+)$/.exec(line);
    if (match?.[1] !== name || !labels.every((l) => (match[2] ?? '').includes(l))) continue;
    total += Number(match[3]);
  }
  return total;
}

/** How many of these requests have their ledger row. */
function rowsOf(dir: string, ids: string[]): number {
  const db = new DatabaseSync(join(dir, 'sluice.db'), { readOnly: true });
  try {
    const sql = `SELECT count(*) AS n FROM ledger WHERE request_id IN (${ids.map(() => '?').join(',')})`;
    return Number((db.prepare(sql).get(...ids) as { n: number }).n);
  } finally {
    db.close();
  }
}

/** Requests in the ledger, and in each rollup table (every row here is within the minutes kept). */
function rollupTotals(dir: string): { ledger: number; minutes: number; hours: number } {
  const db = new DatabaseSync(join(dir, 'sluice.db'), { readOnly: true });
  try {
    const count = (sql: string) => Number((db.prepare(sql).get() as { n: number | null }).n ?? 0);
    return {
      ledger: count('SELECT count(*) AS n FROM ledger'),
      minutes: count('SELECT sum(requests) AS n FROM ledger_minutes'),
      hours: count('SELECT sum(requests) AS n FROM ledger_hours'),
    };
  } finally {
    db.close();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function waitFor<T>(probe: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await sleep(200);
  }
}

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { adminQuery, createTestSchema, databaseUrl, type TestSchema } from '../helpers/postgres.ts';
import { chatJson } from './limits-support.ts';

const redisUrl = process.env.REDIS_URL;
const skip = !databaseUrl
  ? 'DATABASE_URL not set: the two-instance run is skipped'
  : !redisUrl
    ? 'REDIS_URL not set: the two-instance run is skipped'
    : false;

const root = fileURLToPath(new URL('../..', import.meta.url));
const MASTER = 'sk-master-instances-test';
const LIMIT = 100;
const REQUESTS = 250;

interface Instance {
  url: string;
  child: ChildProcess;
  exited: Promise<number | null>;
}

/** `sluice serve` as its own process, as an operator runs it: the config file, a port of its own. */
async function startInstance(configFile: string): Promise<Instance> {
  const child = spawn(process.execPath, [join(root, 'bin/sluice.js'), 'serve', '--config', configFile, '--port', '0'], {
    cwd: root,
    env: { ...process.env, SLUICE_MASTER_KEY: '', DATABASE_URL: '', REDIS_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" line within 60 s:\n${out}`)), 60_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /sluice listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1].replace(/\/$/, ''));
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then((code) => reject(new Error(`sluice exited (${code}) before listening:\n${out}`)));
  });
  return { url, child, exited };
}

async function stopInstance(instance: Instance): Promise<void> {
  instance.child.kill('SIGTERM');
  const timer = setTimeout(() => instance.child.kill('SIGKILL'), 20_000);
  await instance.exited;
  clearTimeout(timer);
}

describe('two instances share one Postgres and one Redis', { skip }, () => {
  let schema: TestSchema;
  let upstream: FakeUpstream;
  let dir: string;
  const instances: Instance[] = [];
  before(async () => {
    schema = await createTestSchema();
    upstream = await startFakeUpstream();
    upstream.reply({ body: chatJson('ok'), headers: { 'content-type': 'application/json' } });
    dir = mkdtempSync(join(tmpdir(), 'sluice-instances-'));
    const config = {
      server: { host: '127.0.0.1' },
      auth: { master_key: MASTER, key_pepper: 'instances-test-pepper' },
      store: { database_url: schema.url },
      providers: { up: { base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' } },
      limits: { redis_url: redisUrl, redis_prefix: `sluice-test:${process.pid}:${randomBytes(4).toString('hex')}:`, redis_timeout_ms: 2_000 },
      tiers: { pooled: { requests_per_minute: LIMIT } },
    };
    // JSON is YAML: the config file as an operator would write it.
    const file = join(dir, 'sluice.yaml');
    writeFileSync(file, JSON.stringify(config));
    instances.push(...(await Promise.all([startInstance(file), startInstance(file)])));
  });
  after(async () => {
    await Promise.all(instances.map(stopInstance));
    await upstream?.close();
    await schema?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`holds one key to ${LIMIT} requests a minute across both (within 2%), with exactly one ledger row per request, counted once in the rollups`, async () => {
    const [a, b] = instances;
    const admin = (path: string, body: unknown) =>
      fetch(`${a.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${MASTER}` },
        body: JSON.stringify(body),
      }).then(async (res) => {
        assert.equal(res.status, 201, await res.clone().text());
        return (await res.json()) as Record<string, string>;
      });
    await admin('/admin/projects', { id: 'team', name: 'Team', tier: 'pooled' });
    const issued = await admin('/admin/keys', { project: 'team' });
    const key = issued.key;
    assert.ok(key, 'the new key is shown once');

    // A bounded load for one key through both instances in turn, 10 at a time.
    const ids: string[] = [];
    const statuses: number[] = [];
    let next = 0;
    const worker = async () => {
      while (next < REQUESTS) {
        const i = next++;
        const target = i % 2 === 0 ? a : b;
        const res = await fetch(`${target.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ model: 'up/gpt-test', messages: [{ role: 'user', content: `request ${i}` }] }),
        });
        await res.arrayBuffer();
        statuses.push(res.status);
        ids.push(res.headers.get('x-request-id') ?? '');
      }
    };
    const started = Date.now();
    await Promise.all(Array.from({ length: 10 }, worker));
    // The bucket holds LIMIT and refills at LIMIT a minute: what it refilled while the load ran may pass too.
    const refilled = Math.floor((LIMIT * (Date.now() - started)) / 60_000);
    const ok = statuses.filter((s) => s === 200).length;
    const limited = statuses.filter((s) => s === 429).length;
    assert.equal(ok + limited, REQUESTS, `statuses: ${[...new Set(statuses)]}`);
    assert.ok(
      ok >= LIMIT - LIMIT * 0.02 && ok <= LIMIT + refilled + LIMIT * 0.02,
      `${ok} admitted for a limit of ${LIMIT} (${refilled} refilled during the load)`,
    );

    // Both stop (and flush their ledgers); then every request has exactly one row.
    await Promise.all(instances.map(stopInstance));
    const rows = await adminQuery(schema.url, 'select request_id, outcome, error_code from ledger where key_id = $1', [issued.id]);
    const counted = new Map<string, number>();
    for (const row of rows.rows as { request_id: string }[]) counted.set(row.request_id, (counted.get(row.request_id) ?? 0) + 1);
    assert.equal(rows.rows.length, REQUESTS);
    assert.deepEqual([...counted.keys()].sort(), [...ids].sort());
    assert.ok([...counted.values()].every((n) => n === 1));
    const refusedRows = (rows.rows as { error_code: string | null }[]).filter((r) => r.error_code === 'rate_limit_exceeded').length;
    assert.equal(refusedRows, limited);
    // Both instances added to the same rollup rows, in their batches' transactions: the sums are the ledger's.
    const totals = await adminQuery(
      schema.url,
      `select (select count(*) from ledger) as ledger, (select sum(requests) from ledger_minutes) as minutes,
              (select sum(requests) from ledger_hours) as hours`,
    );
    const { ledger, minutes, hours } = totals.rows[0] as Record<string, string>;
    assert.deepEqual([Number(minutes), Number(hours)], [Number(ledger), Number(ledger)]);
  });
});

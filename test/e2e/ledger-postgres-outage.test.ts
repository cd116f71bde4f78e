import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { configSchema } from '../../src/config/schema.ts';
import { createGateway, type Gateway } from '../../src/server/app.ts';
import { openDatabase } from '../../src/store/open-database.ts';
import { adminQuery, createTestSchema, noPostgres, type TestSchema } from '../helpers/postgres.ts';
import { tapStreams } from '../helpers/stream-tap.ts';
import { startTcpProxy, type TcpProxy, viaProxy } from '../helpers/tcp-proxy.ts';

// A shutdown spills what it could not write beside store.path: each gateway gets a folder of its own
// (in one of this run's), so that no test's spill is replayed by the next test's gateway.
const dir = mkdtempSync(join(tmpdir(), 'sluice-pg-outage-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A gateway on the proxied Postgres whose log lines the test reads. */
async function gatewayVia(url: string, config: Record<string, unknown> = {}) {
  const logs: string[] = [];
  const parsed = configSchema.parse({
    server: { port: 0, host: '127.0.0.1' },
    ...config,
    store: { database_url: url, path: join(mkdtempSync(join(dir, 'gw-')), 'sluice.db'), ...(config.store as object) },
    // Small batches written often, so batches are in flight when the connection breaks.
    ledger: { flush_interval_ms: 10, batch_size: 8, ...(config.ledger as object) },
  });
  const gateway: Gateway = createGateway(parsed, {}, (m) => logs.push(m));
  tapStreams(gateway.server); // its streams are checked like startGateway's (stream-tap.ts)
  const { port } = await gateway.listen();
  return { gateway, logs, url: `http://127.0.0.1:${port}` };
}

/** One streamed mock request; its request id. */
async function request(url: string, n: number): Promise<string> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock/echo', messages: [{ role: 'user', content: `request ${n}` }], stream: true }),
  });
  const text = await res.text();
  assert.equal(res.status, 200);
  assert.ok(text.endsWith('data: [DONE]\n\n'));
  const id = res.headers.get('x-request-id');
  assert.ok(id);
  return id;
}

/**
 * `total` requests from `concurrency` clients; `during(done)` runs once, when `done` requests
 * have finished (a quarter in), while the load goes on.
 */
async function load(url: string, total: number, concurrency: number, during: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  let next = 0;
  let event: Promise<void> | undefined;
  async function worker(): Promise<void> {
    while (next < total) {
      seen.push(await request(url, next++));
      if (seen.length === Math.floor(total / 4)) event = during();
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  await event;
  assert.equal(new Set(seen).size, total);
  return seen;
}

async function rowsFor(schemaUrl: string, ids: string[]): Promise<number> {
  const { rows } = await adminQuery(schemaUrl, 'select count(*)::int as n from ledger where request_id = any($1)', [ids]);
  return rows[0].n;
}

async function until(done: () => boolean | Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('ledger on PostgreSQL through an outage', { skip: noPostgres }, () => {
  let schema: TestSchema;
  let proxy: TcpProxy;
  let url: string;
  before(async () => {
    schema = await createTestSchema();
    // Migrate once up front, so every test's gateway opens at once.
    await (await openDatabase({ databaseUrl: schema.url, path: ':memory:' })).close();
  });
  afterEach(async () => {
    await proxy?.close();
    await adminQuery(schema.url, 'delete from ledger');
  });
  after(async () => {
    await schema?.drop();
  });
  const freshProxy = async () => {
    proxy = await startTcpProxy(Number(new URL(schema.url).port || 5432));
    url = viaProxy(schema.url, proxy);
  };

  it('a connection cut mid-query fails that query, not the process', async () => {
    await freshProxy();
    const { db, close } = await openDatabase({ databaseUrl: url, path: ':memory:' });
    try {
      const slow = sql`select pg_sleep(30)`.execute(db);
      await sleep(150);
      await proxy.cut();
      await assert.rejects(slow, /Connection terminated|ECONNRESET/);
      await proxy.restore();
      // The pool recovers: the dead client was discarded, a new connection works.
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
      assert.deepEqual(rows, [{ one: 1 }]);
    } finally {
      await close();
    }
  });

  it('loses no record when Postgres goes away for a second mid-load and comes back', async () => {
    await freshProxy();
    const gw = await gatewayVia(url);
    let seen: string[];
    try {
      seen = await load(gw.url, 200, 10, async () => {
        await proxy.cut();
        await sleep(1000);
        await proxy.restore();
      });
      // The writer noticed the outage (else this test proved nothing).
      assert.ok((gw.gateway.context.accounting.ledger?.stats.failures ?? 0) > 0, 'no ledger write failed during the outage');
    } finally {
      // Graceful shutdown flushes what is still buffered.
      await gw.gateway.shutdown(0);
    }
    assert.equal(await rowsFor(schema.url, seen), 200);
    const { rows: all } = await adminQuery(schema.url, 'select count(*)::int as n, min(outcome) as lo, max(outcome) as hi from ledger');
    assert.deepEqual(all, [{ n: 200, lo: 'ok', hi: 'ok' }]);
  });

  it('postgres half-open connection: a stall warns with the records at risk, and none is lost once it is restored', async () => {
    await freshProxy();
    const gw = await gatewayVia(url, { store: { query_timeout_ms: 800, connect_timeout_ms: 800 } });
    let seen: string[] = [];
    try {
      seen = await load(gw.url, 160, 8, async () => {
        proxy.stall();
        await sleep(2500);
        await proxy.restore();
      });
      // Every row reaches the store once the network is back: the stuck connections were given
      // up on (query timeout) and replaced, nothing waited on them forever.
      await until(async () => (await rowsFor(schema.url, seen)) === seen.length, 'every row written after the restore', 20_000);
    } finally {
      await gw.gateway.shutdown(0);
    }
    assert.equal(await rowsFor(schema.url, seen), 160);
    const warning = gw.logs.find((l) => /^ledger: write of \d+ record\(s\) failed \(connection: /.test(l));
    assert.ok(warning, `no warning in:\n${gw.logs.join('\n')}`);
    assert.match(
      warning,
      /; \d+ record\(s\) at risk, held in memory only, spilled to disk if sluice stops first, lost if it crashes; retrying in \d+ ms$/,
    );
  });

  it('PostgreSQL down at shutdown: no buffered record is dropped silently (5 of 5 were); they are spilled, said where, and written at the next start', async () => {
    await freshProxy();
    const gw = await gatewayVia(url, {
      store: { query_timeout_ms: 1000, connect_timeout_ms: 1000 },
      ledger: { shutdown_flush_ms: 1500, flush_interval_ms: 50 },
    });
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await request(gw.url, i));
    proxy.stall();
    // These are buffered, and stuck with the stalled connection.
    for (let i = 10; i < 30; i++) ids.push(await request(gw.url, i));
    await sleep(100);
    const start = Date.now();
    await gw.gateway.shutdown(0);
    const took = Date.now() - start;
    // flush bound (1.5 s) + close bound (the query timeout releases the stuck clients; 5 s at most).
    assert.ok(took < 1500 + 5000 + 1000, `shutdown took ${took} ms`);
    const saved = gw.logs.find((l) => l.startsWith('ledger: shutdown: '));
    const spill = join(dirname(gw.gateway.context.config.store.path), 'ledger-journal');
    assert.match(
      saved ?? '',
      new RegExp(
        `^ledger: shutdown: \\d+ record\\(s\\) not written within 1500 ms; saved to ${spill}/spill-[\\d-]+\\.jsonl, written at the next start$`,
      ),
    );
    // The next start, with the database back, writes them first and deletes the file.
    await proxy.restore();
    const next = await gatewayVia(url, { store: { path: gw.gateway.context.config.store.path } });
    try {
      await until(async () => (await rowsFor(schema.url, ids)) === ids.length, 'every spilled row written', 15_000);
      assert.ok(next.logs.some((l) => /^ledger: \d+ record\(s\) a shutdown saved in .* while the store was unavailable; writing them$/.test(l)));
      await until(() => readdirSync(spill).length === 0, 'the spill file deleted', 5_000);
    } finally {
      await next.gateway.shutdown(0);
    }
  });

  /** A read of the request log or the console: its status, error code and how long it took. */
  async function read(base: string, path: string): Promise<{ status: number; code: string; retryAfter: string | null; ms: number }> {
    const start = Date.now();
    const res = await fetch(`${base}${path}`);
    const body = (await res.json()) as { error?: { code: string } };
    return { status: res.status, code: body.error?.code ?? '', retryAfter: res.headers.get('retry-after'), ms: Date.now() - start };
  }
  const READS = ['/v1/requests', '/v1/requests/req_0123456789abcdef0123456789', '/console/api/stats', '/console/api/price/x'];

  it('PostgreSQL down: the request log answers 503 store_unavailable, not 500 internal_error (reset)', async () => {
    await freshProxy();
    const gw = await gatewayVia(url, { store: { query_timeout_ms: 1000, connect_timeout_ms: 1000 } });
    try {
      const id = await request(gw.url, 0);
      assert.equal((await read(gw.url, `/v1/requests/${id}`)).status, 200);
      await proxy.cut();
      for (const path of [...READS, `/v1/requests/${id}`]) {
        const answer = await read(gw.url, path);
        assert.deepEqual([answer.status, answer.code, answer.retryAfter], [503, 'store_unavailable', '1'], path);
      }
      await proxy.restore();
      await until(async () => (await read(gw.url, `/v1/requests/${id}`)).status === 200, 'the log readable again', 10_000);
    } finally {
      await gw.gateway.shutdown(0);
    }
  });

  it('PostgreSQL down: the request log answers 503 store_unavailable within the query timeout (stall), not 500 after 5 s', async () => {
    await freshProxy();
    // The connect timeout is longer than the query timeout: a stalled new connection must not hold the answer either.
    const gw = await gatewayVia(url, {
      store: { query_timeout_ms: 1000, connect_timeout_ms: 4000 },
      ledger: { shutdown_flush_ms: 500 },
    });
    try {
      await request(gw.url, 0);
      proxy.stall();
      for (const path of READS) {
        const answer = await read(gw.url, path);
        assert.deepEqual([answer.status, answer.code], [503, 'store_unavailable'], path);
        assert.ok(answer.ms < 1000 + 700, `${path} answered after ${answer.ms} ms`);
      }
    } finally {
      await gw.gateway.shutdown(0);
    }
  });

  it('a database down at start-up: sluice serves, says so, retries, and writes the records that waited', async () => {
    await freshProxy();
    await proxy.cut();
    const start = Date.now();
    const gw = await gatewayVia(url, { store: { connect_timeout_ms: 500 } });
    try {
      assert.ok(Date.now() - start < 3000, 'start-up waited for the store');
      const down = gw.logs.find((l) => l.includes('is unavailable'));
      assert.match(
        down ?? '',
        /^ledger: the store \(PostgreSQL 127\.0\.0\.1:\d+\/test\) is unavailable: .*ECONNREFUSED.*\. Serving anyway: records wait in memory \(up to 100000\) until it opens; retrying in 1000 ms$/,
      );
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) ids.push(await request(gw.url, i));
      assert.equal(gw.gateway.context.accounting.ledger?.pending, 20);
      // The request log says what is wrong: a store that is only late is not "disabled".
      const early = await read(gw.url, '/v1/requests');
      assert.deepEqual([early.status, early.code], [503, 'store_unavailable']);
      await proxy.restore();
      await until(async () => (await rowsFor(schema.url, ids)) === 20, 'the waiting records written', 15_000);
      assert.ok(gw.logs.some((l) => /^ledger: the store \(.*\) is open after \d+ attempts; writing the 20 record\(s\) that waited$/.test(l)));
      // The request log works once the store is open.
      const res = await fetch(`${gw.url}/v1/requests/${ids[0]}`);
      assert.equal(res.status, 200);
    } finally {
      await gw.gateway.shutdown(0);
    }
  });
});

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { CHECK_TIMEOUT_MS } from '../../src/server/readiness.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { createTestSchema, databaseUrl, noPostgres, type TestSchema } from '../helpers/postgres.ts';
import { startTcpProxy, type TcpProxy, viaProxy } from '../helpers/tcp-proxy.ts';

const redisUrl = process.env.REDIS_URL;
const noRedis = redisUrl ? false : 'REDIS_URL not set: the Redis readiness run is skipped';

async function probe(url: string, path = '/readyz') {
  const started = performance.now();
  const res = await fetch(`${url}${path}`);
  return { status: res.status, body: (await res.json()) as Record<string, any>, ms: performance.now() - started };
}

/** Probes until `status` (Redis reconnects with backoff), for at most `withinMs`. */
async function probeUntil(url: string, status: number, withinMs: number) {
  const deadline = Date.now() + withinMs;
  let last = await probe(url);
  while (last.status !== status && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    last = await probe(url);
  }
  return last;
}

describe('GET /readyz on PostgreSQL and Redis', { skip: noPostgres || noRedis }, () => {
  let schema: TestSchema;
  let pg: TcpProxy;
  let redis: TcpProxy;
  let gw: TestGateway;
  before(async () => {
    schema = await createTestSchema();
    const pgTarget = new URL(databaseUrl ?? '');
    pg = await startTcpProxy(Number(pgTarget.port || 5432), pgTarget.hostname);
    const redisTarget = new URL(redisUrl ?? '');
    redis = await startTcpProxy(Number(redisTarget.port || 6379), redisTarget.hostname);
    redisTarget.host = `127.0.0.1:${redis.port}`;
    gw = await startGateway({
      providers: { mock: {} },
      store: { database_url: viaProxy(schema.url, pg) },
      // The stalled connection's records are given up quickly at close.
      ledger: { shutdown_flush_ms: 500 },
      limits: {
        redis_url: redisTarget.toString(),
        redis_prefix: `sluice-test:${process.pid}:${randomBytes(4).toString('hex')}:`,
        redis_timeout_ms: 500,
      },
      tiers: { closed: { requests_per_minute: 1000, redis_unavailable: 'fail_closed' } },
    });
  });
  after(async () => {
    await gw.close();
    await Promise.all([pg.close(), redis.close()]);
    await schema.drop();
  });

  it('is ready with the store, Redis and a provider, naming each check and its state', async () => {
    const { status, body } = await probe(gw.url);
    assert.equal(status, 200, JSON.stringify(body));
    assert.deepEqual(body, {
      status: 'ready',
      checks: {
        store: { state: 'ok', engine: 'postgres' },
        redis: { state: 'ok' },
        providers: { state: 'ok', enabled: ['mock'] },
        provider_keys: { state: 'off' },
        mcp: { state: 'off' },
      },
    });
  });

  it('answers 503 while Redis is down and a tier refuses without it, and 200 once it is back', async () => {
    await redis.cut();
    const down = await probe(gw.url);
    assert.equal(down.status, 503);
    assert.equal(down.body.status, 'not_ready');
    assert.deepEqual(down.body.checks.redis, { state: 'down', required: true, reason: 'unreachable' });
    assert.equal((await probe(gw.url, '/healthz')).status, 200, 'liveness is not readiness');
    await redis.restore();
    const back = await probeUntil(gw.url, 200, 15_000);
    assert.equal(back.status, 200, JSON.stringify(back.body));
  });

  it('answers 503 within the check timeout when PostgreSQL stalls, probe after probe', async () => {
    pg.stall();
    const connections = pg.connections;
    for (let i = 0; i < 3; i++) {
      const { status, body, ms } = await probe(gw.url);
      assert.equal(status, 503);
      assert.deepEqual(body.checks.store, { state: 'down', required: true, reason: `no answer within ${CHECK_TIMEOUT_MS} ms` });
      assert.ok(ms < CHECK_TIMEOUT_MS + 1_500, `answered in ${Math.round(ms)} ms`);
    }
    // The probes joined the first one's query: one stalled client of the pool, not one per probe
    // (each new one would open a connection through the proxy).
    assert.equal(pg.connections, connections);
    assert.equal((await probe(gw.url, '/healthz')).status, 200, 'liveness is not readiness');
  });
});

describe('GET /readyz without a usable provider', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({});
  });
  after(() => gw.close());

  it('answers 503 when only the built-in mock is there (and the config does not name it)', async () => {
    const { status, body } = await probe(gw.url);
    assert.equal(status, 503);
    assert.deepEqual(body.checks, {
      store: { state: 'ok', engine: 'sqlite' },
      redis: { state: 'off' },
      providers: { state: 'down', required: true, reason: 'no provider enabled (the mock counts only when providers names it)' },
      provider_keys: { state: 'off' },
      mcp: { state: 'off' },
    });
  });
});

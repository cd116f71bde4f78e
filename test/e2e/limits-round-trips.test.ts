import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createClient } from '@redis/client';
import { after, before, describe, it } from 'node:test';
import { PricingRegistry } from '../../src/accounting/pricing.ts';
import { configSchema } from '../../src/config/schema.ts';
import { LimitsAndBudgets } from '../../src/governance/admit.ts';
import type { AdmissionRequest } from '../../src/admission/admission.ts';
import type { CanonicalRequest } from '../../src/protocol/canonical/request.ts';
import type { ResolvedModel } from '../../src/providers/registry.ts';
import { openDatabase } from '../../src/store/open-database.ts';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type TestGateway, upstreamConfig } from '../helpers/gateway.ts';
import { ledgerRecord } from '../helpers/ledger-records.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';
import { chatSse, speakAsTestCallers } from './limits-support.ts';

/**
 * "Limits never add a network round trip to the time to first token when Redis is local": with
 * every limit and two budget windows on, an admission makes one round trip to Redis (every
 * command in one write), and its settlement one more, after the request, off the path to the
 * first token. Counted at a TCP proxy in front of Redis (count, not time): a pipelined batch
 * arrives as one read, and a command that waited for an earlier answer is a read of its own.
 */
const redisUrl = process.env.REDIS_URL;
const noRedis = redisUrl ? false : 'REDIS_URL not set: the Redis round trips are not counted';

/** Every limit a tier has, per key and per project, and a budget of the key's and one of its project's. */
const TIER = {
  requests_per_minute: 1_000,
  tokens_per_minute: 1_000_000,
  concurrent_requests: 10,
  project: { requests_per_minute: 10_000, tokens_per_minute: 10_000_000, concurrent_requests: 100 },
  budgets: [
    { period: 'day', limit_usd: 100 },
    { scope: 'project', period: 'month', limit_usd: 1_000 },
  ],
};
const PRICED = { pricing: { 'up/gpt-test': { input_mtok: 1, output_mtok: 2 } } };

async function proxiedRedis(): Promise<{ proxy: TcpProxy; url: string }> {
  const target = new URL(redisUrl ?? 'redis://127.0.0.1:6379');
  const proxy = await startTcpProxy(Number(target.port || 6379), target.hostname);
  target.host = `127.0.0.1:${proxy.port}`;
  return { proxy, url: target.toString() };
}

const limitsConfig = (url: string, prefix = `sluice-test:${process.pid}:${randomBytes(4).toString('hex')}:`) => ({
  // Generous: the test machine is busy, and a timeout would admit without Redis (fail_open).
  limits: { redis_url: url, redis_prefix: prefix, redis_timeout_ms: 5_000 },
  tiers: { counted: TIER },
});

/** Waits (10 s at most) for what the proxy saw to satisfy `done`: a settlement is fire and forget. */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done() && waited < 10_000; waited += 5) await new Promise((r) => setTimeout(r, 5));
}

describe('Redis round trips of the limits and budgets', { skip: noRedis }, () => {
  let proxy: TcpProxy;
  let limits: LimitsAndBudgets;
  let closeDb: () => Promise<void>;
  const prefix = `sluice-test:${process.pid}:${randomBytes(4).toString('hex')}:`;
  before(async () => {
    const redis = await proxiedRedis();
    proxy = redis.proxy;
    const config = configSchema.parse({ ...PRICED, ...limitsConfig(redis.url, prefix) });
    limits = new LimitsAndBudgets(config, { pricing: new PricingRegistry(config.pricing), log: (m) => assert.fail(m) });
    await limits.start();
    const db = await openDatabase({ path: ':memory:' });
    limits.attachStore(db.db);
    closeDb = () => db.close();
  });
  after(async () => {
    await limits?.close();
    await closeDb?.();
    await proxy?.close();
  });

  const request = (i: number): AdmissionRequest => ({
    requestId: `rt-${i}`,
    caller: { keyId: 'k1', projectId: 'p1', tier: 'counted', allowedModels: null, admin: false, budgets: [] },
    surface: 'chat',
    target: { provider: 'up', model: 'gpt-test', requested: 'up/gpt-test' } as ResolvedModel,
    request: { model: 'up/gpt-test', messages: [{ role: 'user', content: 'How many round trips?' }], max_tokens: 100 } as CanonicalRequest,
    streamed: true,
  });

  it('admission is one round trip (rates, slots and budget windows in one write); settlement one more, in the background', async () => {
    // The first request of each budget window too: its spend from the store goes along (read once per window and instance).
    for (let i = 0; i < 4; i++) {
      const start = { ...proxy.reads };
      const admission = await limits.admit(request(i));
      assert.ok(admission.headers?.['x-ratelimit-limit-requests'], 'admitted with its limits (not fail_open)');
      assert.equal(proxy.reads.fromClients - start.fromClients, 1, `admission ${i}: round trips to Redis`);

      const settling = { ...proxy.reads };
      // Synchronous: the lifecycle's finally never waits for Redis.
      const amended = admission.settle(ledgerRecord({ requestId: `rt-${i}`, inputTokens: 8, outputTokens: 20, costUsd: 0.00005 }));
      assert.equal(amended instanceof Promise, false);
      assert.equal(proxy.reads.fromClients, settling.fromClients, 'nothing written before settle returns');
      await until(() => proxy.reads.fromServer > settling.fromServer);
      assert.equal(proxy.reads.fromClients - settling.fromClients, 1, `settlement ${i}: round trips to Redis`);
    }
  });

  it('a budget window Redis lost (flushed, evicted) is read from the store again and sent: one more round trip, once', async () => {
    const direct = createClient({ url: redisUrl });
    await direct.connect();
    try {
      const lost = await direct.keys(`${prefix}budget:*`);
      assert.ok(lost.length >= 2, `the windows' keys: ${lost.join(', ')}`);
      await direct.del(lost);
      const start = proxy.reads.fromClients;
      const admission = await limits.admit(request(10));
      assert.equal(proxy.reads.fromClients - start, 2);
      admission.settle(ledgerRecord({ requestId: 'rt-10', inputTokens: 8, outputTokens: 20, costUsd: 0.00005 }));
      const settled = proxy.reads.fromServer;
      await until(() => proxy.reads.fromServer > settled);
      const again = proxy.reads.fromClients;
      await limits.admit(request(11));
      assert.equal(proxy.reads.fromClients - again, 1);
      // The spend came back from the store: the settled requests' costs, not zero.
      assert.ok(
        Number(
          await direct.hGet(
            lost.find((k) => !k.endsWith(':holds'))!,
            'spent',
          ),
        ) > 0,
      );
    } finally {
      const left = await direct.keys(`${prefix}*`);
      if (left.length > 0) await direct.del(left);
      direct.destroy();
    }
  });
});

describe('Redis round trips before the first token, through the gateway', { skip: noRedis }, () => {
  let proxy: TcpProxy;
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    const redis = await proxiedRedis();
    proxy = redis.proxy;
    upstream = await startFakeUpstream();
    gw = await startGateway({ ...upstreamConfig(upstream.url), ...PRICED, ...limitsConfig(redis.url) });
    speakAsTestCallers(gw);
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
    await proxy?.close();
  });

  /** A streamed request: Redis round trips when its first bytes reach the client, and once it was settled. */
  async function roundTrips(): Promise<{ toFirstBytes: number; total: number }> {
    upstream.reply({ pieces: chatSse(['One', ' two', ' three']).split(/(?<=\n\n)/), delayMs: 5 });
    const start = proxy.reads.fromClients;
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-test-key': 'k-rt', 'x-test-tier': 'counted' },
      body: JSON.stringify({ model: 'up/gpt-test', messages: [{ role: 'user', content: 'Count' }], max_tokens: 100, stream: true }),
    });
    assert.equal(res.status, 200);
    assert.ok(res.headers.get('x-ratelimit-limit-requests'), 'admitted with its limits (not fail_open)');
    const reader = res.body!.getReader();
    const firstRead = await reader.read();
    const trips = proxy.reads.fromClients - start;
    assert.match(new TextDecoder().decode(firstRead.value), /^data: /);
    while (!(await reader.read()).done);
    // Its settlement (after the last byte, fire and forget) is answered before the next request counts.
    await until(() => proxy.reads.fromClients - start > trips && proxy.reads.fromServer >= proxy.reads.fromClients);
    return { toFirstBytes: trips, total: proxy.reads.fromClients - start };
  }

  it('a governed stream makes one round trip to Redis before its first bytes, and one to settle after its last', async () => {
    for (let i = 0; i < 4; i++) assert.deepEqual(await roundTrips(), { toFirstBytes: 1, total: 2 }, `request ${i}`);
  });
});

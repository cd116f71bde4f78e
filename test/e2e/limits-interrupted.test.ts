import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createClient } from '@redis/client';
import { after, describe, it } from 'node:test';
import { PricingRegistry } from '../../src/accounting/pricing.ts';
import { configSchema } from '../../src/config/schema.ts';
import { LimitsAndBudgets } from '../../src/governance/admit.ts';
import type { AdmissionRequest } from '../../src/admission/admission.ts';
import type { CanonicalRequest } from '../../src/protocol/canonical/request.ts';
import type { ResolvedModel } from '../../src/providers/registry.ts';
import { openDatabase } from '../../src/store/open-database.ts';
import type { OpenedDatabase } from '../../src/store/store-location.ts';
import { ledgerRecord } from '../helpers/ledger-records.ts';

/**
 * "A crash loses every request in flight": the requests a crash cut short are recorded at the next
 * start (pipeline/record-interrupted.ts), and what they held in the limits and budgets is settled
 * there (LimitsAndBudgets.settleInterrupted) from the holds their admission gave the journal.
 */
const redisUrl = process.env.REDIS_URL;
const noRedis = redisUrl ? false : 'REDIS_URL not set: the Redis-held slots and reservations are skipped';

/** One request in flight per key, and a day's budget of $1. */
const TIER = { concurrent_requests: 1, budgets: [{ period: 'day', limit_usd: 1 }] };
const PRICED = { pricing: { 'up/gpt-test': { input_mtok: 1, output_mtok: 2 } } };

const request = (requestId: string): AdmissionRequest => ({
  requestId,
  caller: { keyId: 'k1', projectId: 'p1', tier: 'held', allowedModels: null, admin: false, budgets: [] },
  surface: 'chat',
  target: { provider: 'up', model: 'gpt-test', requested: 'up/gpt-test' } as ResolvedModel,
  request: { model: 'up/gpt-test', messages: [{ role: 'user', content: 'What is held?' }], max_tokens: 100 } as CanonicalRequest,
  streamed: true,
});

/** A gateway's limits and budgets (one process of it), on its own store or a shared one. */
async function instance(limits: Record<string, unknown>, db?: OpenedDatabase) {
  const config = configSchema.parse({ ...PRICED, limits, tiers: { held: TIER } });
  const l = new LimitsAndBudgets(config, { pricing: new PricingRegistry(config.pricing), log: () => {} });
  await l.start();
  const store = db ?? (await openDatabase({ path: ':memory:' }));
  l.attachStore(store.db);
  return { limits: l, close: () => l.close() };
}

const refused = async (l: LimitsAndBudgets, id: string) =>
  Promise.resolve(l.admit(request(id))).then(
    () => false,
    () => true,
  );

describe('settling a request a crash cut short (a crash loses every request in flight)', () => {
  it('the admission gives the journal what it holds: its slot, its budget windows and reservation, the prompt estimate', async () => {
    const { limits, close } = await instance({});
    try {
      const admission = await limits.admit(request('r1'));
      const holds = admission.holds;
      assert.deepEqual(holds?.slots, [{ subject: 'key:k1', limit: 1 }]);
      assert.deepEqual(
        holds?.budget?.windows.map((w) => w.subject),
        ['key:k1'],
      );
      assert.ok((holds?.budget?.reservedNanos ?? 0) > 0);
      assert.ok((holds?.promptTokens ?? 0) > 0);
      admission.settle(ledgerRecord({ requestId: 'r1' }));
    } finally {
      await close();
    }
  });

  it('in memory: a new process holds neither slot nor reservation; only the spend is added, and no live slot is freed', async () => {
    const db = await openDatabase({ path: ':memory:' });
    const before = await instance({}, db);
    const holds = (await before.limits.admit(request('cut'))).holds;
    await before.close();
    // The restart: a fresh process, whose own request holds the key's one slot.
    const after = await instance({}, db);
    try {
      const live = await after.limits.admit(request('live'));
      const record = after.limits.settleInterrupted(holds, ledgerRecord({ requestId: 'cut', costUsd: 0.25, outcome: 'interrupted' }));
      assert.deepEqual(
        record.budgetSpend?.map((s) => [s.subject, s.usd]),
        [['key:k1', 0.25]],
        'its cost goes with its row, in the row transaction',
      );
      assert.equal(await refused(after.limits, 'third'), true, "the live request's slot is still taken");
      live.settle(ledgerRecord({ requestId: 'live', costUsd: 0 }));
    } finally {
      await after.close();
      await db.close();
    }
  });

  describe('in Redis', { skip: noRedis }, () => {
    const prefix = `sluice-test:${process.pid}:${randomBytes(4).toString('hex')}:`;
    const redis = { redis_url: redisUrl, redis_prefix: prefix, redis_timeout_ms: 5_000 };
    after(async () => {
      const direct = createClient({ url: redisUrl });
      await direct.connect();
      const left = await direct.keys(`${prefix}*`);
      if (left.length > 0) await direct.del(left);
      direct.destroy();
    });

    it('the next start releases the slot and the reservation at once (not at their expiry) and charges the cost', async () => {
      const db = await openDatabase({ path: ':memory:' });
      const crashed = await instance(redis, db);
      const holds = (await crashed.limits.admit(request('cut'))).holds;
      // Killed: nothing settled. Its slot and reservation stay in Redis until they expire.
      await crashed.close();
      const restarted = await instance(redis, db);
      const direct = createClient({ url: redisUrl });
      await direct.connect();
      try {
        assert.equal(await refused(restarted.limits, 'blocked'), true, 'the dead request still holds the slot');
        const window = holds?.budget?.windows[0];
        assert.ok(window);
        const hash = `${prefix}budget:${window.id}`;
        assert.equal(Number(await direct.hGet(hash, 'reserved')), holds?.budget?.reservedNanos);
        const spentBefore = Number(await direct.hGet(hash, 'spent'));
        const record = restarted.limits.settleInterrupted(holds, ledgerRecord({ requestId: 'cut', costUsd: 0.25, outcome: 'interrupted' }));
        assert.deepEqual(
          record.budgetSpend?.map((s) => s.usd),
          [0.25],
        );
        // Fire and forget, as every settlement: wait (bounded) for Redis to have it.
        for (let i = 0; i < 200 && Number(await direct.hGet(hash, 'reserved')) !== 0; i++) await new Promise((r) => setTimeout(r, 10));
        assert.equal(Number(await direct.hGet(hash, 'reserved')), 0);
        assert.equal(Number(await direct.hGet(hash, 'spent')), spentBefore + 0.25e9);
        const next = await restarted.limits.admit(request('next'));
        next.settle(ledgerRecord({ requestId: 'next', costUsd: 0 }));
      } finally {
        direct.destroy();
        await restarted.close();
        await db.close();
      }
    });
  });
});

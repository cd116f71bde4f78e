import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestSchema, noPostgres, type TestSchema } from '../../test/helpers/postgres.ts';
import { ledgerRecord } from '../../test/helpers/ledger-records.ts';
import { LedgerStore } from './ledger-store.ts';
import { openDatabase } from './open-database.ts';
import {
  listReconciliations,
  pruneReconciliations,
  readLedgerDays,
  readUpstreamIds,
  releaseLock,
  saveReconciliation,
  takeLock,
} from './reconcile-store.ts';
import type { OpenedDatabase, StoreLocation } from './store-location.ts';

const DAY = 86_400_000;
const D1 = Date.UTC(2026, 10, 1);

function reconcileContract(name: string, location: () => Promise<StoreLocation>, skip: string | false = false): void {
  describe(`the reconciliation's store: ${name}`, { skip }, () => {
    let db: OpenedDatabase;
    before(async () => {
      db = await openDatabase(await location());
      await new LedgerStore(db.db).insert([
        ledgerRecord({
          requestId: 'a',
          createdAt: D1 + 1,
          model: 'm',
          inputTokens: 10,
          cachedInputTokens: 4,
          outputTokens: 5,
          costUsd: 0.25,
          upstreamRequestId: 'up-a',
        }),
        ledgerRecord({ requestId: 'b', createdAt: D1 + DAY - 1, model: 'm', inputTokens: 20, outputTokens: 5, costUsd: 0.5 }),
        ledgerRecord({
          requestId: 'c',
          createdAt: D1 + DAY,
          model: 'new',
          inputTokens: 7,
          outputTokens: 3,
          costUsd: 0,
          priceKnown: false,
          upstreamRequestId: 'up-c',
        }),
        ledgerRecord({ requestId: 'd', createdAt: D1 + DAY, model: 'm', provider: 'anthropic', costUsd: 3 }),
        ledgerRecord({ requestId: 'e', createdAt: D1 + DAY, model: 'tool', surface: 'mcp', inputTokens: 0, outputTokens: 0, costUsd: 0 }),
        ledgerRecord({ requestId: 'f', createdAt: D1 + 2 * DAY, model: 'm', costUsd: 9 }),
      ]);
    });
    after(() => db.close());

    it('sums one provider per UTC day and model over the range, counting the unpriced rows', async () => {
      const rows = await readLedgerDays(db.db, 'openai', D1, D1 + 2 * DAY);
      rows.sort((a, b) => a.dayStart - b.dayStart);
      assert.deepEqual(rows, [
        { dayStart: D1, model: 'm', requests: 2, input: 30, cached: 4, output: 10, cost: 0.75, unpriced: 0 },
        { dayStart: D1 + DAY, model: 'new', requests: 1, input: 7, cached: 0, output: 3, cost: 0, unpriced: 1 },
      ]);
    });

    it('reads the upstream ids of the range, oldest first, at most the limit', async () => {
      assert.deepEqual(await readUpstreamIds(db.db, 'openai', D1, D1 + 2 * DAY, 10), [
        { upstreamId: 'up-a', createdAt: D1 + 1 },
        { upstreamId: 'up-c', createdAt: D1 + DAY },
      ]);
      assert.equal((await readUpstreamIds(db.db, 'openai', D1, D1 + 2 * DAY, 1)).length, 1);
    });

    it('lets one holder at a time take a lock, and an expired one be taken over', async () => {
      assert.equal(await takeLock(db.db, 'reconcile:x', 'h1', 1000, 2000), true);
      assert.equal(await takeLock(db.db, 'reconcile:x', 'h2', 1500, 2500), false);
      assert.equal(await takeLock(db.db, 'reconcile:y', 'h2', 1500, 2500), true);
      assert.equal(await takeLock(db.db, 'reconcile:x', 'h2', 2001, 3000), true);
      await releaseLock(db.db, 'reconcile:x', 'h1');
      assert.equal(await takeLock(db.db, 'reconcile:x', 'h3', 2100, 3000), false);
      await releaseLock(db.db, 'reconcile:x', 'h2');
      assert.equal(await takeLock(db.db, 'reconcile:x', 'h3', 2100, 3000), true);
    });

    it('stores results, lists them newest first by provider and trigger, and prunes the old ones', async () => {
      const base = { fromDay: '2026-11-01', toDay: '2026-11-01', status: 'ok' as const, error: null, result: '{}' };
      await saveReconciliation(db.db, { ...base, id: 'r1', provider: 'openai', createdAt: 100, trigger: 'schedule' });
      await saveReconciliation(db.db, { ...base, id: 'r2', provider: 'openai', createdAt: 200, trigger: 'manual' });
      await saveReconciliation(db.db, { ...base, id: 'r3', provider: 'anthropic', createdAt: 300, trigger: 'manual' });
      const ids = async (q: Parameters<typeof listReconciliations>[1]) => (await listReconciliations(db.db, q)).map((r) => r.id);
      assert.deepEqual(await ids({ limit: 10 }), ['r3', 'r2', 'r1']);
      assert.deepEqual(await ids({ provider: 'openai', limit: 10 }), ['r2', 'r1']);
      assert.deepEqual(await ids({ provider: 'openai', trigger: 'schedule', limit: 10 }), ['r1']);
      const [r2] = await listReconciliations(db.db, { provider: 'openai', limit: 1 });
      assert.deepEqual(r2, { ...base, id: 'r2', provider: 'openai', createdAt: 200, trigger: 'manual' });
      await pruneReconciliations(db.db, 250);
      assert.deepEqual(await ids({ limit: 10 }), ['r3']);
    });
  });
}

const schemas: TestSchema[] = [];
const dirs: string[] = [];
after(async () => {
  for (const s of schemas) await s.drop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
reconcileContract('node:sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-reconcile-'));
  dirs.push(dir);
  return { path: join(dir, 'ledger.db') };
});
reconcileContract(
  'PostgreSQL',
  async () => {
    const schema = await createTestSchema();
    schemas.push(schema);
    return { path: ':memory:', databaseUrl: schema.url };
  },
  noPostgres,
);

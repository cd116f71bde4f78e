import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestSchema, noPostgres, type TestSchema } from '../../../test/helpers/postgres.ts';
import { ledgerRecord } from '../../../test/helpers/ledger-records.ts';
import { LedgerStore } from '../../store/ledger-store.ts';
import { openDatabase } from '../../store/open-database.ts';
import type { OpenedDatabase, StoreLocation } from '../../store/store-location.ts';
import { type BudgetWindow, toNanos } from './budget-windows.ts';
import { SpendLedger } from './spend-ledger.ts';
import { SpendStore } from './spend-store.ts';

const window: BudgetWindow = {
  id: 'key:k1:day:2026-11-24',
  subject: 'key:k1',
  period: 'day',
  start: Date.UTC(2026, 10, 24),
  end: Date.UTC(2100, 0, 1),
  limitNanos: toNanos(10),
};

/** Two instances' ledgers over one store: what each knows of the other's spend, and when. */
function spendContract(name: string, location: () => Promise<StoreLocation>, skip: string | false = false) {
  describe(`spend ledger over ${name}`, { skip }, () => {
    let db: OpenedDatabase;
    before(async () => {
      db = await openDatabase(await location());
    });
    after(() => db.close());

    it('reads the past from the store, counts its own spend once, and learns the others at the next refresh', async () => {
      const store = new SpendStore(db.db);
      const ledger = new LedgerStore(db.db);
      const spend = (usd: number) => [{ windowId: window.id, subject: window.subject, period: 'day', start: window.start, usd }];
      await ledger.insert([ledgerRecord({ requestId: 'past', costUsd: 1.5, budgetSpend: spend(1.5) })]);
      const a = new SpendLedger({ refreshMs: 60_000, log: () => {} });
      const b = new SpendLedger({ refreshMs: 60_000, log: () => {} });
      a.attach(store);
      b.attach(store);
      assert.equal(await a.spent(window), toNanos(1.5));
      assert.equal(await b.spent(window), toNanos(1.5));
      a.add(window, toNanos(0.25));
      assert.equal(a.spent(window), toNanos(1.75), 'its own spend at once');
      await a.tick(); // read back before its ledger row is written: still counted once
      assert.equal(a.spent(window), toNanos(1.75));
      // The ledger writer stores the row with its spend and says so.
      await ledger.insert([ledgerRecord({ requestId: 'new', costUsd: 0.25, budgetSpend: spend(0.25) })]);
      a.written(spend(0.25));
      assert.equal(a.spent(window), toNanos(1.75));
      await a.tick();
      assert.equal(a.spent(window), toNanos(1.75), 'written, then read back: still counted once');
      assert.equal(b.spent(window), toNanos(1.5), 'the other instance learns it at its next read');
      await b.tick();
      assert.equal(b.spent(window), toNanos(1.75));
      const rows = await store.spent([window.id, 'key:none:day:x']);
      assert.deepEqual([...rows], [[window.id, 1.75]]);
      await a.close();
      await b.close();
    });
  });
}

spendContract('node:sqlite', async () => ({ path: ':memory:' }));

let schema: TestSchema | undefined;
after(async () => schema?.drop());
spendContract(
  'PostgreSQL',
  async () => {
    schema = await createTestSchema();
    return { path: ':memory:', databaseUrl: schema.url };
  },
  noPostgres,
);

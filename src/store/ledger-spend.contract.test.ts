import assert from 'node:assert/strict';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { createTestSchema, noPostgres, type TestSchema } from '../../test/helpers/postgres.ts';
import { ledgerRecord } from '../../test/helpers/ledger-records.ts';
import type { BudgetSpend, LedgerRecord } from '../accounting/ledger-record.ts';
import { SpendStore } from '../governance/budgets/spend-store.ts';
import { LedgerStore } from './ledger-store.ts';
import { openDatabase } from './open-database.ts';
import type { OpenedDatabase, StoreLocation } from './store-location.ts';

const DAY: BudgetSpend = { windowId: 'key:k1:day:2026-11-24', subject: 'key:k1', period: 'day', start: Date.UTC(2026, 10, 24), usd: 0 };
const MONTH: BudgetSpend = { windowId: 'project:p1:month:2026-11', subject: 'project:p1', period: 'month', start: Date.UTC(2026, 10, 1), usd: 0 };

/** A request that cost `usd`, charged to the key's day and the project's month. */
const spending = (requestId: string, usd: number): LedgerRecord =>
  ledgerRecord({
    requestId,
    costUsd: usd,
    budgetSpend: [
      { ...DAY, usd },
      { ...MONTH, usd },
    ],
  });

/** "The reservation is settled to the real cost in the same write as the ledger row": one transaction. */
function spendContract(name: string, location: () => Promise<StoreLocation>, skip: string | false = false) {
  describe(`ledger rows and their budget spend, one transaction: ${name}`, { skip }, () => {
    let db: OpenedDatabase;
    let ledger: LedgerStore;
    let spend: SpendStore;
    beforeEach(async () => {
      db = await openDatabase(await location());
      ledger = new LedgerStore(db.db);
      spend = new SpendStore(db.db);
    });
    afterEach(() => db.close());

    const totals = async () => Object.fromEntries(await spend.spent([DAY.windowId, MONTH.windowId]));
    const rows = async (ids: string[]) => (await Promise.all(ids.map((id) => ledger.get(id)))).filter(Boolean).length;

    it('writes each row with its spend, summed per window, and a retried batch adds nothing twice', async () => {
      const batch = [spending('s-1', 0.25), spending('s-2', 0.5), ledgerRecord({ requestId: 's-3', costUsd: 0 })];
      await ledger.insert(batch);
      assert.deepEqual(await totals(), { [DAY.windowId]: 0.75, [MONTH.windowId]: 0.75 });
      // A batch whose commit the writer did not hear of is sent again: its rows are there already.
      await ledger.insert([...batch, spending('s-4', 1)]);
      assert.deepEqual(await totals(), { [DAY.windowId]: 1.75, [MONTH.windowId]: 1.75 });
      assert.equal(await rows(['s-1', 's-2', 's-3', 's-4']), 4);
    });

    it('a batch that fails in its rows (past its first insert) leaves neither rows nor spend', async () => {
      const batch = Array.from({ length: 150 }, (_, i) => spending(`f-${i}`, 0.01));
      // The second insert statement (rows 100-149) fails: a row's created_at may not be null.
      batch[130] = { ...batch[130], createdAt: null as unknown as number };
      await assert.rejects(ledger.insert(batch));
      assert.deepEqual(await totals(), {});
      assert.equal(await rows(batch.slice(0, 100).map((r) => r.requestId)), 0);
    });

    it('a batch that fails in its spend leaves neither: its rows are not written', async () => {
      const window = { ...DAY, windowId: 'key:k2:day:2026-11-24', subject: null as unknown as string, usd: 0.5 };
      const broken = { ...spending('b-2', 0.5), budgetSpend: [window] };
      await assert.rejects(ledger.insert([spending('b-1', 0.25), broken]));
      assert.deepEqual(await totals(), {});
      assert.equal(await rows(['b-1', 'b-2']), 0);
    });
  });
}

spendContract('node:sqlite', async () => ({ path: ':memory:' }));

const schemas: TestSchema[] = [];
after(async () => {
  for (const s of schemas) await s.drop();
});
spendContract(
  'PostgreSQL',
  async () => {
    const schema = await createTestSchema();
    schemas.push(schema);
    return { path: ':memory:', databaseUrl: schema.url };
  },
  noPostgres,
);

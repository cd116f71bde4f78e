import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { createTestSchema, noPostgres } from '../../test/helpers/postgres.ts';
import { openDatabase, type OpenedDatabase, type StoreLocation } from '../store/open-database.ts';
import { summarize } from './minute-rollups.ts';
import { RollupStore } from './rollup-store.ts';

const T0 = Date.UTC(2026, 0, 1, 12, 0);
const record = (fields: Partial<LedgerRecord>) =>
  ({
    createdAt: T0,
    provider: 'mock',
    model: 'echo',
    inputTokens: 3,
    outputTokens: 4,
    costUsd: 0.5,
    ttftMs: 20,
    latencyMs: 700,
    outcome: 'ok',
    ...fields,
  }) as LedgerRecord;

function rollupSuite(name: string, location: () => Promise<{ store: StoreLocation; drop(): Promise<void> }>, skip: string | false = false) {
  describe(`the rollups in the store: ${name}`, { skip }, () => {
    let opened: OpenedDatabase;
    let drop = async () => {};
    before(async () => {
      const site = await location();
      drop = () => site.drop();
      opened = await openDatabase(site.store);
    });
    after(async () => {
      await opened?.close();
      await drop();
    });

    it('adds batches to the same minute row, so processes writing one store share the sums', async () => {
      const store = new RollupStore(opened.db);
      await store.add(summarize([record({}), record({ outcome: 'error' })]));
      await store.add(summarize([record({ createdAt: T0 + 30_000 }), record({ model: 'slow', createdAt: T0 + 60_000 })]));
      const cells = await store.since(T0);
      const echo = cells.find((c) => c.model === 'echo')!;
      assert.deepEqual(
        { requests: echo.requests, errors: echo.errors, input: echo.inputTokens, output: echo.outputTokens, cost: echo.costUsd },
        { requests: 3, errors: 1, input: 9, output: 12, cost: 1.5 },
      );
      assert.equal(echo.ttft[1], 3); // <= 25 ms
      assert.equal(echo.latency[6], 3); // <= 1 s
      assert.deepEqual(
        (await store.since(T0 + 60_000)).map((c) => c.model),
        ['slow'],
      );
    });
  });
}

rollupSuite('SQLite', async () => ({ store: { path: ':memory:' }, drop: async () => {} }));
rollupSuite(
  'PostgreSQL',
  async () => {
    const schema = await createTestSchema();
    return { store: { path: ':memory:', databaseUrl: schema.url }, drop: schema.drop };
  },
  noPostgres,
);

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LedgerRecord } from '../../accounting/ledger-record.ts';
import { PricingRegistry } from '../../accounting/pricing.ts';
import { configSchema } from '../../config/schema.ts';
import type { BudgetWindow } from '../../governance/budgets/budget-windows.ts';
import type { PipelineContext } from '../../pipeline/context.ts';
import type { BatchApi, BatchCall } from '../../providers/batch-api.ts';
import { BatchObjectsStore } from '../../store/batch-objects-store.ts';
import { openDatabase } from '../../store/open-database.ts';
import type { OpenedDatabase } from '../../store/store-location.ts';
import { budgetRulesOf, settleBatch } from './settle.ts';

const RESULTS = [1, 2]
  .map((i) =>
    JSON.stringify({
      custom_id: `r${i}`,
      result: { type: 'succeeded', message: { model: 'claude-haiku-4-5', usage: { input_tokens: 1000 * i, output_tokens: 100 * i } } },
    }),
  )
  .join('\n');

/** Anthropic's Message Batches as a BatchApi that answers the results and counts its calls. */
function fakeApi(calls: BatchCall[]): BatchApi {
  return {
    kind: 'anthropic',
    url: (path) => `https://api.anthropic.com/v1${path}`,
    send: async (call) => {
      calls.push(call);
      return { status: 200, headers: {}, body: Buffer.from(RESULTS) };
    },
    mapError: () => {
      throw new Error('no error expected');
    },
  };
}

describe("a batch's settlement", () => {
  let db: OpenedDatabase;
  let store: BatchObjectsStore;
  let written: LedgerRecord[];
  let charged: { windows: string[]; costUsd: number }[];
  let ctx: PipelineContext;

  beforeEach(async () => {
    db = await openDatabase({ path: ':memory:' });
    store = new BatchObjectsStore(db.db);
    written = [];
    charged = [];
    const config = configSchema.parse({
      pricing: { 'anthropic/claude-haiku-4-5': { input_mtok: 1, output_mtok: 5 } },
      tiers: { capped: { budgets: [{ period: 'month', limit_usd: 10, scope: 'project' }] } },
    });
    ctx = {
      config,
      accounting: { pricing: new PricingRegistry(config.pricing), ledger: { write: (r: LedgerRecord) => written.push(r) }, log: () => {} },
      chargeLate: (windows: readonly BudgetWindow[], _id: string, costUsd: number) => charged.push({ windows: windows.map((w) => w.id), costUsd }),
    } as unknown as PipelineContext;
  });
  afterEach(() => db.close());

  const caller = {
    keyId: 'k1',
    projectId: 'team-a',
    tier: 'capped',
    allowedModels: null,
    admin: false,
    budgets: [{ scope: 'key' as const, period: 'day' as const, limitUsd: 1 }],
  };

  async function created(budgets: string | null) {
    await store.record({
      id: 'msgbatch_1',
      kind: 'message_batch',
      provider: 'anthropic',
      projectId: 'team-a',
      keyId: 'k1',
      requestId: 'req-1',
      budgets,
    });
    const object = await store.find('msgbatch_1', 'message_batch');
    assert.ok(object);
    return object;
  }

  it('does nothing while the batch runs: no upstream call, no claim, no row', async () => {
    const calls: BatchCall[] = [];
    const object = await created(null);
    assert.equal(await settleBatch(object, fakeApi(calls), { processing_status: 'in_progress' }, { ctx, store, newId: () => 'row' }), false);
    assert.deepEqual([calls.length, written.length], [0, 0]);
    assert.equal((await store.find('msgbatch_1', 'message_batch'))?.settledAt, null);
  });

  it('an ended batch: its usage per model at half the price, its spend in the windows its key had at creation', async () => {
    const calls: BatchCall[] = [];
    const object = await created(budgetRulesOf(ctx.config, caller));
    const now = new Date();
    assert.equal(await settleBatch(object, fakeApi(calls), { processing_status: 'ended' }, { ctx, store, newId: () => 'row-1' }), true);
    assert.deepEqual(
      calls.map((c) => [c.method, c.path]),
      [['GET', '/messages/batches/msgbatch_1/results']],
    );
    assert.equal(written.length, 1);
    const [row] = written;
    assert.deepEqual(
      [row.requestId, row.keyId, row.projectId, row.model, row.inputTokens, row.outputTokens],
      ['row-1', 'k1', 'team-a', 'claude-haiku-4-5', 3000, 300],
    );
    // (3000 * $1 + 300 * $5) / 1e6, halved.
    assert.equal(row.costUsd, 0.00225);
    const month = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
    const day = `${month}-${String(now.getUTCDate()).padStart(2, '0')}`;
    const windows = [`project:team-a:month:${month}`, `key:k1:day:${day}`];
    assert.deepEqual(
      row.budgetSpend?.map((s) => [s.windowId, s.usd]),
      windows.map((w) => [w, 0.00225]),
    );
    assert.deepEqual(charged, [{ windows, costUsd: 0.00225 }]);
  });

  it('a settlement claimed already (by this instance or another) writes nothing more', async () => {
    const object = await created(null);
    assert.equal(await store.claimSettlement(object.id), true);
    assert.equal(await settleBatch(object, fakeApi([]), { processing_status: 'ended' }, { ctx, store, newId: () => 'row' }), false);
    assert.deepEqual(written, []);
  });

  it('results a client just fetched are not asked for again', async () => {
    const calls: BatchCall[] = [];
    const object = await created(null);
    assert.equal(await settleBatch(object, fakeApi(calls), { processing_status: 'ended' }, { ctx, store, newId: () => 'row' }, RESULTS), true);
    assert.deepEqual([calls.length, written.length, written[0].budgetSpend], [0, 1, undefined]);
  });
});

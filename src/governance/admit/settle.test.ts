import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ledgerRecord } from '../../../test/helpers/ledger-records.ts';
import type { LedgerRecord } from '../../accounting/ledger-record.ts';
import { configSchema } from '../../config/schema.ts';
import { MemoryBudgetBook } from '../budgets/budget-book.ts';
import { type BudgetWindow, toNanos } from '../budgets/budget-windows.ts';
import { SpendLedger } from '../budgets/spend-ledger.ts';
import { MemorySlots } from '../limits/concurrency-slots.ts';
import { MemoryRateBuckets, type RateSettlement } from '../limits/rate-buckets.ts';
import { compileTier } from '../limits/tier-policy.ts';
import type { Bookkeeping, Books } from './books.ts';
import type { Plan } from './plan-charges.ts';
import { type Admitted, settleAdmission, settleInterrupted } from './settle.ts';

const AT = 1_000_000;
const day: BudgetWindow = { id: 'key:k1:day:x', subject: 'key:k1', period: 'day', start: 0, end: 86_400_000, limitNanos: toNanos(1) };
const month: BudgetWindow = {
  id: 'project:p1:month:x',
  subject: 'project:p1',
  period: 'month',
  start: 0,
  end: 2_592_000_000,
  limitNanos: toNanos(9),
};

const plan: Plan = {
  charges: [
    { subject: 'key:k1', kind: 'requests', limit: 60, points: 1 },
    { subject: 'key:k1', kind: 'tokens', limit: 1_000, points: 30 },
    { subject: 'project:p1', kind: 'tokens', limit: 9_000, points: 30 },
  ],
  scopes: ['key', 'key', 'project'],
  claims: [{ subject: 'key:k1', limit: 2 }],
  budget: { windows: [day, month], inputNanos: 0, outputNanosPerToken: 1, choices: 1, want: toNanos(0.5), min: 1, stepNanos: 1, ownMax: undefined },
  holdMs: 60_000,
  promptTokens: 30,
};

/** Memory books holding what `plan` took for r1, and what the settlement asked of the rest. */
async function setup(fields: Partial<Admitted> = {}, shared = false) {
  const book = new MemoryBudgetBook(new SpendLedger({ refreshMs: 1_000, log: () => {}, now: () => AT }), () => AT);
  const books: Books = { rates: new MemoryRateBuckets(), slots: new MemorySlots(), book, extending: book, shared };
  await books.slots.acquire(plan.claims, 'r1', plan.holdMs);
  await book.reserve(plan.budget!.windows, 'r1', plan.budget!.want, plan.budget!.min, plan.holdMs);
  const asked = { reconciled: [] as RateSettlement[][], budgets: [] as [string, number][], shared: [] as string[] };
  const keeping = {
    reconcileRates: (_: Books, settlements: RateSettlement[]) => void asked.reconciled.push(settlements),
    settleBudget: (b: Books, windows: readonly BudgetWindow[], requestId: string, cost: number) => {
      b.book.settle(windows, requestId, cost);
      asked.budgets.push([requestId, cost]);
    },
    settledShared: (requestId: string) => void asked.shared.push(requestId),
  };
  const admitted: Admitted = { requestId: 'r1', plan, tier: undefined, books, at: AT, guard: undefined, capped: false, ...fields };
  const settle = (record: Partial<LedgerRecord>) => settleAdmission(admitted, ledgerRecord({ requestId: 'r1', ...record }), keeping);
  return { books, asked, settle };
}

const tier = (abandoned: 'void' | 'bill_generated') =>
  compileTier('t', configSchema.parse({ tiers: { t: { abandoned_streams: abandoned } } }).tiers.t);

describe('settleAdmission', () => {
  it('gives back the slot and turns the reservation into the real cost, stored with the row in every window', async () => {
    const { books, asked, settle } = await setup();
    const amended = settle({ costUsd: 0.25, inputTokens: 20, outputTokens: 10 });
    assert.deepEqual(books.slots.inUse(['key:k1']), [0]);
    assert.deepEqual(asked.budgets, [['r1', toNanos(0.25)]]);
    assert.deepEqual(
      amended?.budgetSpend?.map((s) => [s.windowId, s.usd]),
      [
        [day.id, 0.25],
        [month.id, 0.25],
      ],
    );
    // Reserved no more: the day has its limit less the cost left.
    assert.deepEqual(await books.book.reserve([day], 'r2', toNanos(1), 1, 1), { ok: true, granted: toNanos(0.75) });
  });

  it("reconciles the token charges the prompt's estimate got wrong, with the tokens used, as of the admission", async () => {
    const { asked, settle } = await setup();
    settle({ inputTokens: 25, outputTokens: 17 });
    assert.deepEqual(
      asked.reconciled.map((s) => s.map((x) => [x.charge.subject, x.used, x.chargedAt])),
      [
        [
          ['key:k1', 42, AT],
          ['project:p1', 42, AT],
        ],
      ],
    );
  });

  it('an estimate that was right reconciles nothing', async () => {
    const { asked, settle } = await setup();
    settle({ inputTokens: 20, outputTokens: 10 });
    assert.deepEqual(asked.reconciled, []);
  });

  const amendments: {
    name: string;
    admitted: Partial<Admitted>;
    record: Partial<LedgerRecord>;
    amended: Partial<LedgerRecord> | undefined;
    settled: number;
  }[] = [
    { name: 'a free answer stands as it is', admitted: {}, record: { costUsd: 0 }, amended: undefined, settled: 0 },
    {
      name: 'a stream its client abandoned costs nothing on a tier that voids them',
      admitted: { tier: tier('void') },
      record: { outcome: 'cancelled', costUsd: 0.1 },
      amended: { costUsd: 0, billing: 'void', budgetSpend: undefined },
      settled: 0,
    },
    {
      name: 'an abandoned stream is billed what it generated on a tier that bills it',
      admitted: { tier: tier('bill_generated') },
      record: { outcome: 'cancelled', costUsd: 0.1 },
      amended: { costUsd: 0.1, billing: null },
      settled: toNanos(0.1),
    },
    {
      name: 'a stream its budget stopped is named budget_exhausted',
      admitted: { guard: { stopped: true } },
      record: { costUsd: 0, finishReason: 'length' },
      amended: { finishReason: 'budget_exhausted' },
      settled: 0,
    },
    {
      name: 'a non-streamed answer that ran into the cap of its reservation is named budget_exhausted',
      admitted: { capped: true },
      record: { costUsd: 0, finishReason: 'length' },
      amended: { finishReason: 'budget_exhausted' },
      settled: 0,
    },
    {
      name: 'an answer that ran into its own limit keeps its finish reason',
      admitted: { capped: false, guard: { stopped: false } },
      record: { costUsd: 0, finishReason: 'length' },
      amended: undefined,
      settled: 0,
    },
  ];
  for (const a of amendments) {
    it(a.name, async () => {
      const { asked, settle } = await setup(a.admitted);
      const record = ledgerRecord({ requestId: 'r1', ...a.record });
      const amended = settle(a.record);
      if (a.amended === undefined) assert.equal(amended, undefined);
      else {
        assert.ok(amended);
        const { budgetSpend, ...fields } = a.amended;
        assert.deepEqual({ ...amended, budgetSpend: undefined }, { ...record, ...fields, budgetSpend: undefined });
        if ('budgetSpend' in a.amended) assert.equal(amended.budgetSpend, budgetSpend);
      }
      assert.deepEqual(asked.budgets, [['r1', a.settled]]);
    });
  }

  it('an admission made through Redis is settled there, and what the own books adopted of it given back', async () => {
    const local = await setup();
    local.settle({});
    const shared = await setup({}, true);
    shared.settle({});
    assert.deepEqual([local.asked.shared, shared.asked.shared], [[], ['r1']]);
  });

  it('an admission without slots or a budget releases and settles nothing', async () => {
    const { books, asked, settle } = await setup({ plan: { ...plan, claims: [], budget: undefined } });
    assert.equal(settle({ costUsd: 0.5 }), undefined);
    assert.deepEqual([books.slots.inUse(['key:k1']), asked.budgets], [[1], []]);
  });
});

describe('settleInterrupted', () => {
  /** Memory books holding a slot and a reservation of r1, as Redis would: the shared ones, or this instance's own. */
  async function holding(shared: boolean) {
    const book = new MemoryBudgetBook(new SpendLedger({ refreshMs: 1_000, log: () => {}, now: () => AT }), () => AT);
    const books = { rates: new MemoryRateBuckets(), slots: new MemorySlots(), book, extending: book, shared };
    books.slots.acquire(plan.claims);
    await book.reserve([day], 'r1', toNanos(0.5), 1, plan.holdMs);
    const keeping: Pick<Bookkeeping, 'local' | 'shared' | 'settleBudget'> = {
      local: { ...books, shared: false },
      shared: () => (shared ? books : undefined),
      settleBudget: (b, windows, requestId, cost) => b.book.settle(windows, requestId, cost),
    };
    return { books, keeping };
  }
  const holds = { budget: { windows: [day], reservedNanos: toNanos(0.5) }, slots: plan.claims, promptTokens: 30 };

  it('in Redis: its slot is given back and its reservation turned into its cost, stored with its row', async () => {
    const { books, keeping } = await holding(true);
    const record = settleInterrupted(holds, ledgerRecord({ requestId: 'r1', costUsd: 0.25 }), keeping);
    assert.deepEqual(books.slots.inUse(['key:k1']), [0]);
    assert.deepEqual(await books.book.reserve([day], 'r2', toNanos(1), 1, 1), { ok: true, granted: toNanos(0.75) });
    assert.deepEqual(
      record.budgetSpend?.map((s) => [s.windowId, s.usd]),
      [[day.id, 0.25]],
    );
  });

  it("without Redis: the own books' slots are left (a new process holds none), the spend still counts", async () => {
    const { books, keeping } = await holding(false);
    const record = settleInterrupted(holds, ledgerRecord({ requestId: 'r1', costUsd: 0.25 }), keeping);
    assert.deepEqual(books.slots.inUse(['key:k1']), [1]);
    assert.equal(record.budgetSpend?.[0].usd, 0.25);
  });

  it('nothing held, or nothing spent: the record stands as it is', async () => {
    const { keeping } = await holding(true);
    const record = ledgerRecord({ requestId: 'r1', costUsd: 0 });
    assert.equal(settleInterrupted(undefined, record, keeping), record);
    assert.equal(settleInterrupted({ slots: plan.claims }, record, keeping), record);
    assert.equal(settleInterrupted(holds, record, keeping), record);
  });
});

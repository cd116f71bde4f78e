import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { RedisUnavailable } from '../../store/redis-link.ts';
import { type BudgetBook, MemoryBudgetBook } from '../budgets/budget-book.ts';
import { type BudgetWindow, toNanos } from '../budgets/budget-windows.ts';
import { SpendLedger } from '../budgets/spend-ledger.ts';
import { MemorySlots } from '../limits/concurrency-slots.ts';
import { MemoryRateBuckets, type RateSettlement } from '../limits/rate-buckets.ts';
import { compileTier, type TierPolicy } from '../limits/tier-policy.ts';
import { configSchema } from '../../config/schema.ts';
import type { Bookkeeping, Books, LocalBooks } from './books.ts';
import { checkCharges, checkSomewhere } from './check-charges.ts';
import type { Plan } from './plan-charges.ts';

const NOW = 1_000_000;
const window: BudgetWindow = { id: 'key:k1:day:x', subject: 'key:k1', period: 'day', start: 0, end: 86_400_000, limitNanos: toNanos(1) };

function memoryBooks(): LocalBooks {
  const book = new MemoryBudgetBook(new SpendLedger({ refreshMs: 1_000, log: () => {}, now: () => NOW }), () => NOW);
  return { rates: new MemoryRateBuckets(), slots: new MemorySlots(), book, extending: book, shared: false };
}

/** A request per minute and a slot of key k1, and a reservation of $0.5 (at least $0.1) of its $1 day. */
function plan(fields: Partial<Plan> = {}): Plan {
  return {
    charges: [{ subject: 'key:k1', kind: 'requests', limit: 10, points: 1 }],
    scopes: ['key'],
    claims: [{ subject: 'key:k1', limit: 1 }],
    budget: {
      windows: [window],
      inputNanos: 0,
      outputNanosPerToken: 1,
      choices: 1,
      want: toNanos(0.5),
      min: toNanos(0.1),
      stepNanos: 1,
      ownMax: undefined,
    },
    holdMs: 60_000,
    promptTokens: 30,
    ...fields,
  };
}

/** Bookkeeping over two sets of memory books, the second standing for Redis's; what it was asked is recorded. */
function keeping(link: Bookkeeping['link'], shared?: Books) {
  const local = memoryBooks();
  const reconciled: { books: Books; settlements: RateSettlement[] }[] = [];
  const decided: string[] = [];
  const keeping: Bookkeeping = {
    local,
    link,
    shared: () => shared,
    events: { fellBack: () => {}, decidedLocally: (policy) => decided.push(policy) },
    reconcileRates: (books, settlements) => {
      reconciled.push({ books, settlements });
      void books.rates.reconcile(settlements, NOW);
    },
    settleBudget: () => assert.fail('a check settles no budget'),
    settledShared: () => assert.fail('a check settles nothing'),
  };
  return { keeping, local, reconciled, decided };
}

/** What the books hold of key k1 now: its requests this minute, its slots, its budget room. */
async function held(books: Books) {
  const probe = plan({ charges: [{ subject: 'key:k1', kind: 'requests', limit: 10, points: 0 }], claims: [] });
  const rates = await books.rates.consume(probe.charges, NOW);
  const slots = await books.slots.inUse(['key:k1']);
  const budget = await books.book.reserve([window], 'probe', toNanos(1), 0, 1);
  books.book.settle([window], 'probe', 0);
  return { requests: 10 - rates.states[0].remaining, slots: slots[0], room: budget.ok ? budget.granted : 0 };
}

/** The memory book with some of its steps replaced (its methods are its class's: a spread would drop them). */
function overriding(book: BudgetBook, steps: Partial<BudgetBook>): BudgetBook {
  return {
    reserve: (...args) => book.reserve(...args),
    extend: (...args) => book.extend(...args),
    settle: (...args) => book.settle(...args),
    ...steps,
  };
}

function tier(config: Record<string, unknown>): TierPolicy {
  return compileTier('t', configSchema.parse({ tiers: { t: config } }).tiers.t);
}

type Link = NonNullable<Bookkeeping['link']>;
const available = (run: Link['run']): Link => ({ available: () => true, run });
/** The link's run, with no client: the books stand for Redis's. */
const passThrough = <T>(work: (client: never) => Promise<T>) => work(undefined as never);

describe('checkCharges', () => {
  it('all fit: the limit is charged, the slot taken and the budget reserved, all at once', async () => {
    const { keeping: k, local } = keeping(undefined);
    const checked = await checkCharges(plan(), 'r1', NOW, local, k);
    assert.deepEqual(checked.slots, { ok: true, inUse: [1] });
    assert.deepEqual(checked.budget, { ok: true, granted: toNanos(0.5) });
    assert.equal(checked.rates?.ok, true);
    assert.deepEqual(await held(local), { requests: 1, slots: 1, room: toNanos(0.5) });
  });

  it('a plan that asks nothing of a limit leaves it unasked', async () => {
    const { keeping: k, local } = keeping(undefined);
    const checked = await checkCharges(plan({ charges: [], claims: [], budget: undefined }), 'r1', NOW, local, k);
    assert.deepEqual(checked, { rates: undefined, slots: undefined, budget: undefined });
  });

  const refusals: {
    name: string;
    before: (books: LocalBooks) => Promise<unknown>;
    refused: 'rates' | 'slots' | 'budget';
    ratesGivenBack: boolean;
  }[] = [
    {
      name: 'the slot is taken: the limit charged and the budget reserved are given back',
      before: async (books) => books.slots.acquire([{ subject: 'key:k1', limit: 1 }]),
      refused: 'slots',
      ratesGivenBack: true,
    },
    {
      name: 'the budget is spent: the limit charged and the slot taken are given back',
      before: async (books) => books.book.reserve([window], 'other', toNanos(0.95), 0, 60_000),
      refused: 'budget',
      ratesGivenBack: true,
    },
    {
      name: 'the limit is reached: the slot and the budget are given back, the limit took nothing',
      before: async (books) => books.rates.consume([{ subject: 'key:k1', kind: 'requests', limit: 10, points: 10 }], NOW),
      refused: 'rates',
      ratesGivenBack: false,
    },
  ];
  for (const r of refusals) {
    it(r.name, async () => {
      const { keeping: k, local, reconciled } = keeping(undefined);
      await r.before(local);
      const before = await held(local);
      const checked = await checkCharges(plan(), 'r1', NOW, local, k);
      assert.equal(checked[r.refused]?.ok, false);
      assert.deepEqual(await held(local), before);
      assert.equal(reconciled.length, r.ratesGivenBack ? 1 : 0);
      if (r.ratesGivenBack)
        assert.deepEqual(
          reconciled[0].settlements.map((s) => [s.used, s.chargedAt]),
          [[0, NOW]],
        );
    });
  }

  it('a book that fails: what the others took is given back, and its failure thrown', async () => {
    const { keeping: k, local } = keeping(undefined);
    const failing: Books = { ...local, book: overriding(local.book, { reserve: () => Promise.reject(new Error('store gone')) }) };
    await assert.rejects(checkCharges(plan(), 'r1', NOW, failing, k), /store gone/);
    assert.deepEqual(await held(local), { requests: 0, slots: 0, room: toNanos(1) });
  });
});

describe('checkSomewhere', () => {
  it('without Redis: on the own books, and no request counted as decided without it', async () => {
    const { keeping: k, local, decided } = keeping(undefined);
    const { books } = await checkSomewhere(plan(), 'r1', NOW, tier({ requests_per_minute: 10 }), k);
    assert.equal(books, local);
    assert.deepEqual(decided, []);
  });

  it('while Redis answers: on the shared books, within the link', async () => {
    const shared: Books = { ...memoryBooks(), shared: true };
    let runs = 0;
    const { keeping: k, local } = keeping(
      available((work) => {
        runs++;
        return passThrough(work);
      }),
      shared,
    );
    const { books } = await checkSomewhere(plan(), 'r1', NOW, tier({ redis_unavailable: 'fail_closed' }), k);
    assert.deepEqual([books, runs], [shared, 1]);
    assert.deepEqual(await held(shared), { requests: 1, slots: 1, room: toNanos(0.5) });
    assert.deepEqual(await held(local), { requests: 0, slots: 0, room: toNanos(1) });
  });

  const away: { name: string; link: () => Bookkeeping['link']; ready?: () => Promise<void> }[] = [
    { name: 'Redis is away', link: () => ({ available: () => false, run: () => assert.fail('not asked while away') }) },
    { name: 'Redis fails the check', link: () => available(() => Promise.reject(new RedisUnavailable('no answer within 50 ms'))) },
    {
      name: "the store cannot give a window's spend that Redis must be seeded with",
      link: () => available(() => assert.fail('not asked without the spend')),
      ready: () => Promise.reject(new Error('pool timeout')),
    },
  ];
  for (const a of away) {
    it(`${a.name}: a fail_open tier is checked on the own books, and counted`, async () => {
      const shared: Books = { ...memoryBooks(), shared: true };
      if (a.ready) shared.book = overriding(shared.book, { ready: a.ready });
      const { keeping: k, local, decided } = keeping(a.link(), shared);
      const { books, checked } = await checkSomewhere(plan(), 'r1', NOW, tier({ requests_per_minute: 10 }), k);
      assert.deepEqual([books, checked.budget, decided], [local, { ok: true, granted: toNanos(0.5) }, ['fail_open']]);
    });

    it(`${a.name}: a fail_closed tier is refused with a 503 and nothing is taken`, async () => {
      const shared: Books = { ...memoryBooks(), shared: true };
      if (a.ready) shared.book = overriding(shared.book, { ready: a.ready });
      const { keeping: k, local, decided } = keeping(a.link(), shared);
      await assert.rejects(checkSomewhere(plan(), 'r1', NOW, tier({ redis_unavailable: 'fail_closed' }), k), (err: unknown) => {
        assert.ok(err instanceof GatewayError);
        assert.deepEqual([err.status, err.code], [503, 'limits_unavailable']);
        return true;
      });
      assert.deepEqual(decided, ['fail_closed']);
      assert.deepEqual(await held(local), { requests: 0, slots: 0, room: toNanos(1) });
    });
  }

  it("a window's spend read from the store first: checked in Redis once it is read", async () => {
    const shared: Books = { ...memoryBooks(), shared: true };
    let read = false;
    shared.book = overriding(shared.book, { ready: () => Promise.resolve().then(() => void (read = true)) });
    const { keeping: k } = keeping(
      available((work) => {
        assert.ok(read, 'the spend is read before Redis is asked');
        return passThrough(work);
      }),
      shared,
    );
    const { books } = await checkSomewhere(plan(), 'r1', NOW, undefined, k);
    assert.equal(books, shared);
  });

  it('a failure that is not Redis being unavailable is thrown as it is', async () => {
    const shared: Books = { ...memoryBooks(), shared: true };
    const { keeping: k, decided } = keeping(
      available(() => Promise.reject(new TypeError('a bug'))),
      shared,
    );
    await assert.rejects(checkSomewhere(plan(), 'r1', NOW, undefined, k), TypeError);
    assert.deepEqual(decided, []);
  });
});

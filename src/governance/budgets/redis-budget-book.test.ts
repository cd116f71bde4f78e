import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient } from '@redis/client';
import type { Redis } from '../../store/redis-link.ts';
import { type BudgetWindow, toNanos } from './budget-windows.ts';
import { RedisBudgetBook } from './redis-budget-book.ts';
import { SpendLedger } from './spend-ledger.ts';
import type { SpendStore } from './spend-store.ts';

const redisUrl = process.env.REDIS_URL;
const skip = redisUrl ? false : 'REDIS_URL not set: the Redis budget book is skipped';

/**
 * Two instances' books on one Redis, each with its own clock: what one reserved and never settled
 * (its process died) must stop counting against the other at its expiry, and what one settled
 * must stop counting at once.
 */
describe('Redis budget book: shared reservations, and the spend they are checked against', { skip }, () => {
  let client: Redis;
  const prefix = `sluice-test-${process.pid}-${Date.now()}:`;
  let now = Date.now();
  const clock = () => now;

  const book = () => {
    const spend = new SpendLedger({ refreshMs: 60_000, log: () => {}, now: clock });
    const send = (_what: string, work: (c: Redis) => Promise<unknown>) => void work(client);
    return new RedisBudgetBook(() => client, prefix, spend, send, clock);
  };
  const window = (id: string): BudgetWindow => ({
    id,
    subject: 'key:k1',
    period: 'day',
    start: now - 1_000,
    end: now + 86_400_000,
    limitNanos: toNanos(1),
  });

  before(async () => {
    client = createClient({ url: redisUrl }) as Redis;
    await client.connect();
  });
  after(async () => {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(keys);
    client.destroy();
  });

  it('a reservation whose instance died lapses at its expiry on every other instance', async () => {
    const w = window('key:k1:day:crash');
    const crashed = book();
    const other = book();
    assert.deepEqual(await crashed.reserve([w], 'req-crashed', toNanos(1), 1, 5_000), { ok: true, granted: toNanos(1) });
    const refused = await other.reserve([w], 'req-b', toNanos(0.5), 1, 5_000);
    assert.deepEqual(refused.ok === false && [refused.spentNanos, refused.reservedNanos], [0, toNanos(1)]);
    now += 5_001;
    assert.deepEqual(await other.reserve([w], 'req-b', toNanos(0.5), 1, 5_000), { ok: true, granted: toNanos(0.5) });
    // The lapsed hold is gone from the hash too: only the live one is counted.
    assert.equal(await client.hGet(`${prefix}budget:${w.id}`, 'reserved'), String(toNanos(0.5)));
  });

  it('no request is refused for a reservation that has ended: settling releases it before the next reserve', async () => {
    const w = window('key:k1:day:sequential');
    const a = book();
    const b = book();
    // Each request reserves the whole budget and costs a tenth of it: ten in a row, alternating
    // instances, all admitted; the eleventh meets the spend.
    for (let i = 0; i < 10; i++) {
      const instance = i % 2 === 0 ? a : b;
      const outcome = await instance.reserve([w], `req-${i}`, toNanos(1), toNanos(0.1), 60_000);
      assert.equal(outcome.ok, true, `request ${i}`);
      instance.settle([w], `req-${i}`, toNanos(0.1));
    }
    const last = await a.reserve([w], 'req-10', toNanos(1), toNanos(0.1), 60_000);
    assert.deepEqual(last.ok === false && [last.spentNanos, last.reservedNanos], [toNanos(1), 0]);
  });

  /** A book whose store says `stored()` USD for every window, counting its reads. */
  const bookOnStore = (stored: () => number) => {
    const reads = { count: 0 };
    const spend = new SpendLedger({ refreshMs: 60_000, log: () => {}, now: clock });
    const store = {
      spent: async (ids: readonly string[]) => {
        reads.count++;
        await new Promise((r) => setTimeout(r, 20));
        return new Map(ids.map((id) => [id, stored()]));
      },
    };
    spend.attach(store as unknown as SpendStore);
    const send = (_what: string, work: (c: Redis) => Promise<unknown>) => void work(client);
    return { book: new RedisBudgetBook(() => client, prefix, spend, send, clock), reads, spend };
  };

  it('a slow Redis turns budgets and limits off (issue 25): a burst of requests of a new window reads its spend from the store once, before Redis', async () => {
    const w = window('key:k1:day:burst');
    const { book, reads } = bookOnStore(() => 0.25);
    await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        await book.ready([w]);
        return book.reserve([w], `burst-${i}`, toNanos(0.01), 1, 60_000);
      }),
    );
    assert.equal(reads.count, 1);
    assert.equal(await client.hGet(`${prefix}budget:${w.id}`, 'spent'), String(toNanos(0.25)));
  });

  it("a slow Redis turns budgets and limits off (issue 25): after Redis was away the spend is sent again, and Redis keeps the larger of its own and the store's", async () => {
    const w = window('key:k1:day:outage');
    let stored = 0.1;
    const { book } = bookOnStore(() => stored);
    await book.ready([w]);
    assert.equal((await book.reserve([w], 'before', toNanos(0.2), 1, 60_000)).ok, true);
    book.settle([w], 'before', toNanos(0.2));
    await new Promise((r) => setTimeout(r, 50));
    const spent = () => client.hGet(`${prefix}budget:${w.id}`, 'spent');
    assert.equal(await spent(), String(toNanos(0.3)));
    // Spent meanwhile on the instances' own books: in the store, not in Redis's mirror.
    stored = 0.7;
    book.forget();
    await book.ready([w]);
    await book.reserve([w], 'after', 1, 1, 60_000);
    assert.equal(await spent(), String(toNanos(0.7) + toNanos(0.2)), 'the store (with the pending settle) wins');
    // A store behind Redis (another instance's settlements not written yet) does not lower it.
    stored = 0.1;
    book.forget();
    await book.ready([w]);
    await book.reserve([w], 'later', 1, 1, 60_000);
    assert.equal(await spent(), String(toNanos(0.7) + toNanos(0.2)));
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryBudgetBook } from './budget-book.ts';
import { type BudgetWindow, toNanos } from './budget-windows.ts';
import { SpendLedger } from './spend-ledger.ts';

function setup() {
  let now = 1_000;
  const clock = () => now;
  const spend = new SpendLedger({ refreshMs: 1_000, log: () => {}, now: clock });
  const book = new MemoryBudgetBook(spend, clock);
  const window: BudgetWindow = { id: 'key:k1:day:x', subject: 'key:k1', period: 'day', start: 0, end: 86_400_000, limitNanos: toNanos(1) };
  return { book, spend, window, advance: (ms: number) => (now += ms) };
}

describe('memory budget book', () => {
  it('grants what is asked while there is room, and less when that is all there is', async () => {
    const { book, window } = setup();
    assert.deepEqual(await book.reserve([window], 'a', toNanos(0.6), 1, 10_000), { ok: true, granted: toNanos(0.6) });
    assert.deepEqual(await book.reserve([window], 'b', toNanos(0.6), 1, 10_000), { ok: true, granted: toNanos(0.4) });
    const refused = await book.reserve([window], 'c', toNanos(0.1), 1, 10_000);
    assert.deepEqual(refused, { ok: false, window, spentNanos: 0, reservedNanos: toNanos(1) });
  });

  it('settling releases the reservation and counts the real cost', async () => {
    const { book, spend, window } = setup();
    await book.reserve([window], 'a', toNanos(0.9), 1, 10_000);
    book.settle([window], 'a', toNanos(0.25));
    assert.equal(spend.spent(window), toNanos(0.25));
    assert.deepEqual(await book.reserve([window], 'b', toNanos(2), 1, 10_000), { ok: true, granted: toNanos(0.75) });
  });

  it('a reservation that is never settled (its instance died) lapses at its expiry', async () => {
    const { book, window, advance } = setup();
    await book.reserve([window], 'crashed', toNanos(1), 1, 5_000);
    assert.equal((await book.reserve([window], 'b', toNanos(0.5), 1, 5_000)).ok, false);
    advance(5_000);
    assert.deepEqual(await book.reserve([window], 'b', toNanos(0.5), 1, 5_000), { ok: true, granted: toNanos(0.5) });
  });

  it('a spent budget refuses even a request that costs nothing (min 1 nano-dollar)', async () => {
    const { book, window } = setup();
    await book.reserve([window], 'a', toNanos(1), 1, 10_000);
    book.settle([window], 'a', toNanos(1));
    const refused = await book.reserve([window], 'free', 0, 1, 10_000);
    assert.equal(refused.ok, false);
  });

  it('every window must have room: the tightest one decides the grant', async () => {
    const { book, window } = setup();
    const month: BudgetWindow = { ...window, id: 'key:k1:month:x', period: 'month', limitNanos: toNanos(0.3) };
    assert.deepEqual(await book.reserve([window, month], 'a', toNanos(0.5), 1, 10_000), { ok: true, granted: toNanos(0.3) });
    const refused = await book.reserve([window, month], 'b', toNanos(0.5), 1, 10_000);
    assert.equal(refused.ok === false && refused.window.id, 'key:k1:month:x');
  });

  it('an extension grows a reservation within the room left', async () => {
    const { book, window } = setup();
    await book.reserve([window], 'a', toNanos(0.5), 1, 10_000);
    assert.equal(await book.extend([window], 'a', toNanos(0.3), 10_000), toNanos(0.3));
    assert.equal(await book.extend([window], 'a', toNanos(0.3), 10_000), toNanos(0.2));
    assert.equal(await book.extend([window], 'a', toNanos(0.3), 10_000), 0);
    book.settle([window], 'a', 0);
    assert.deepEqual(await book.reserve([window], 'b', toNanos(1), 1, 10_000), { ok: true, granted: toNanos(1) });
  });
});

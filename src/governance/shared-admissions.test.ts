import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryBudgetBook } from './budgets/budget-book.ts';
import { type BudgetWindow, toNanos } from './budgets/budget-windows.ts';
import { SpendLedger } from './budgets/spend-ledger.ts';
import { MemorySlots } from './limits/concurrency-slots.ts';
import { SharedAdmissions } from './shared-admissions.ts';

const window: BudgetWindow = { id: 'key:k1:day:1', subject: 'key:k1', period: 'day', start: 0, end: 86_400_000, limitNanos: toNanos(1) };
const claims = [{ subject: 'key:k1', limit: 1 }];

function ownBooks() {
  const spend = new SpendLedger({ refreshMs: 60_000, log: () => {} });
  return { slots: new MemorySlots(), book: new MemoryBudgetBook(spend), spend };
}

describe('admissions through Redis, adopted by the own books when it goes away', () => {
  it('a slow Redis turns budgets and limits off (issue 25): what is in flight through Redis is not granted again by the own books', async () => {
    const local = ownBooks();
    const inFlight = new SharedAdmissions();
    let reserved = toNanos(0.6);
    inFlight.add('r1', { claims, windows: [window], reserved: () => reserved, ttlMs: 60_000 });
    reserved = toNanos(0.9); // the stream extended its reservation since
    inFlight.adoptInto(local);
    assert.deepEqual(local.slots.acquire(claims), { ok: false, refused: 0, inUse: [1] });
    const refused = await local.book.reserve([window], 'r2', toNanos(0.5), toNanos(0.2), 60_000);
    assert.deepEqual(refused.ok === false && refused.reservedNanos, toNanos(0.9));
    // Adopting twice (Redis away again) counts nothing twice.
    inFlight.adoptInto(local);
    assert.deepEqual(local.slots.inUse(['key:k1']), [1]);

    // It settles: given back here; its cost is the shared book's to add (it was admitted there).
    inFlight.settled('r1', local);
    assert.deepEqual(local.slots.inUse(['key:k1']), [0]);
    assert.deepEqual(await local.book.reserve([window], 'r2', toNanos(0.5), toNanos(0.2), 60_000), { ok: true, granted: toNanos(0.5) });
    assert.equal(local.spend.spent(window), 0);
  });

  it('an admission that settles while Redis answers leaves the own books as they were', () => {
    const local = ownBooks();
    const inFlight = new SharedAdmissions();
    inFlight.add('r1', { claims, windows: undefined, reserved: () => 0, ttlMs: 60_000 });
    inFlight.settled('r1', local);
    inFlight.adoptInto(local);
    assert.deepEqual(local.slots.inUse(['key:k1']), [0]);
  });
});

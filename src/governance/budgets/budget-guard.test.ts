import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BudgetBook } from './budget-book.ts';
import { BudgetGuard } from './budget-guard.ts';

/** A book whose extensions grant what the test says, and count. */
function book(grants: number[]): BudgetBook & { asked: number } {
  return {
    asked: 0,
    reserve: () => Promise.reject(new Error('not used')),
    async extend() {
      this.asked++;
      return grants.shift() ?? 0;
    },
    settle: () => {},
  };
}

const guard = (b: BudgetBook, reserved: number) =>
  new BudgetGuard({
    book: b,
    windows: [],
    requestId: 'r',
    inputNanos: 100,
    outputNanosPerToken: 10,
    reserved,
    stepNanos: 400,
    ttlMs: 1_000,
    log: () => {},
  });

describe('budget guard', () => {
  it('is a synchronous compare while the stream is well within its reservation', () => {
    const g = guard(book([]), 1_000);
    // 100 + ceil(400 / 4) * 10 = 1100 > 1000 * 0.8, so only up to 280 bytes stay synchronous.
    assert.equal(g.watch(0), false);
    assert.equal(g.watch(280), false);
    assert.equal(g.stopped, false);
  });

  it('extends ahead of need and goes on while extensions are granted', async () => {
    const b = book([400]);
    const g = guard(b, 1_000);
    assert.equal(g.watch(300), false); // 100 + 750 = 850: past 80%, asks for more, not over yet
    await new Promise((r) => setImmediate(r));
    assert.equal(b.asked, 1);
    assert.equal(g.watch(500), false); // 1350 <= 1400
  });

  it('stops once the cost passes a reservation that cannot grow', async () => {
    const b = book([0]);
    const g = guard(b, 1_000);
    const verdict = g.watch(400); // 1100 > 1000: waits for the extension, which grants nothing
    assert.ok(verdict instanceof Promise);
    assert.equal(await verdict, true);
    assert.equal(g.stopped, true);
    assert.equal(g.watch(400), true);
  });

  it('an unreachable book ends growth: the stream keeps what it holds', async () => {
    const failing: BudgetBook = { reserve: () => Promise.reject(new Error('x')), extend: () => Promise.reject(new Error('down')), settle: () => {} };
    const g = guard(failing, 1_000);
    assert.equal(await g.watch(400), true);
  });

  it("holds a session's real cost to the same reservation (Realtime)", async () => {
    const g = guard(book([400]), 1_000);
    assert.equal(g.watchCost(700), false); // within 80%: no extension asked
    assert.equal(await g.watchCost(1_300), false); // grows to 1400 and fits
    assert.equal(await g.watchCost(1_500), true); // past what the book would give
    assert.equal(g.stopped, true);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { askAgain, askAgainWaits } from './ask-again.ts';

describe('askAgainWaits', () => {
  it('doubles from 10 ms to 100 ms and cuts the last wait to end at the total', () => {
    assert.deepEqual(askAgainWaits(500), [10, 20, 40, 80, 100, 100, 100, 50]);
    assert.deepEqual(askAgainWaits(25), [10, 15]);
  });

  it('sums to the total, whatever it is, and is empty for none', () => {
    for (const total of [1, 9, 10, 11, 150, 310, 499, 500, 501, 2_000]) {
      const waits = askAgainWaits(total);
      assert.equal(
        waits.reduce((a, b) => a + b, 0),
        total,
        String(total),
      );
      assert.ok(waits.every((w) => w > 0 && w <= 100));
    }
    assert.deepEqual(askAgainWaits(0), []);
    assert.deepEqual(askAgainWaits(-5), []);
  });
});

describe('askAgain', () => {
  it('stops at the first ask that is done', async () => {
    let asks = 0;
    await askAgain(500, async () => ++asks === 3);
    assert.equal(asks, 3);
  });

  it('asks once after each wait when none is done, and takes the whole time', async () => {
    let asks = 0;
    const started = performance.now();
    await askAgain(60, async () => (asks++, false));
    assert.equal(asks, askAgainWaits(60).length);
    assert.ok(performance.now() - started >= 55);
  });
});

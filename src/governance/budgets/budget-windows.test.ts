import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { budgetWindows, periodAt, toNanos, windowExhausted } from './budget-windows.ts';

const NOW = Date.UTC(2026, 10, 24, 23, 59, 59, 999); // 2026-11-24T23:59:59.999Z

describe('budget windows', () => {
  it('are calendar days and months in UTC', () => {
    assert.deepEqual(periodAt('day', NOW), { start: Date.UTC(2026, 10, 24), end: Date.UTC(2026, 10, 25), label: '2026-11-24' });
    assert.deepEqual(periodAt('month', NOW), { start: Date.UTC(2026, 10, 1), end: Date.UTC(2026, 11, 1), label: '2026-11' });
    // The next millisecond is the next day; December rolls into January.
    assert.equal(periodAt('day', NOW + 1).label, '2026-11-25');
    assert.equal(periodAt('month', Date.UTC(2026, 11, 31, 12)).end, Date.UTC(2027, 0, 1));
  });

  it('one window per subject and period, the lower limit when two rules meet', () => {
    const windows = budgetWindows(
      [
        { scope: 'key', period: 'day', limitUsd: 5 },
        { scope: 'key', period: 'day', limitUsd: 2 },
        { scope: 'key', period: 'month', limitUsd: 50 },
        { scope: 'project', period: 'month', limitUsd: 500 },
      ],
      { keyId: 'k1', projectId: 'p1' },
      NOW,
    );
    assert.deepEqual(
      windows.map((w) => [w.id, w.limitNanos]),
      [
        ['key:k1:day:2026-11-24', toNanos(2)],
        ['key:k1:month:2026-11', toNanos(50)],
        ['project:p1:month:2026-11', toNanos(500)],
      ],
    );
  });

  it('a rule whose subject the caller lacks does not apply (the master key has no key id)', () => {
    assert.deepEqual(budgetWindows([{ scope: 'key', period: 'day', limitUsd: 1 }], { keyId: null, projectId: null }, NOW), []);
  });

  it('money is integer nano-dollars', () => {
    assert.equal(toNanos(0.0000063), 6300);
    assert.equal(toNanos(0.1) + toNanos(0.2), toNanos(0.3));
  });

  it('is exhausted once its spend reaches its limit, not before', () => {
    assert.equal(windowExhausted(toNanos(1), 0.999999999), false);
    assert.equal(windowExhausted(toNanos(1), 1), true);
    assert.equal(windowExhausted(toNanos(1), 1.25), true);
    assert.equal(windowExhausted(toNanos(0), 0), true);
  });
});

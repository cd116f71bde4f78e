import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareRows, modelKey } from './compare.ts';
import type { LedgerRow, ReportRow } from './rows.ts';

const threshold = { relative: 0.02, absoluteUsd: 0.01 };
const days = ['2026-11-01', '2026-11-02'];

const ledger = (day: string, model: string, over: Partial<LedgerRow> = {}): LedgerRow => ({
  day,
  model,
  requests: 10,
  input: 1000,
  cached: 200,
  output: 500,
  cost: 1.5,
  unpriced: 0,
  ...over,
});
const report = (day: string, model: string, over: Partial<ReportRow> = {}): ReportRow => ({
  day,
  model,
  input: 1000,
  cached: 200,
  output: 500,
  cost: 1.5,
  ...over,
});

describe('compareRows', () => {
  it('matches equal sides, summing the report rows of several keys and cost rows of their own', () => {
    const c = compareRows(
      [ledger(days[0], 'gpt-4o-mini'), ledger(days[1], 'gpt-4o-mini')],
      [
        report(days[0], 'gpt-4o-mini-2024-07-18', { input: 600, cached: 100, output: 300, cost: 0, key: 'key_b' }),
        report(days[0], 'gpt-4o-mini-2024-07-18', { input: 400, cached: 100, output: 200, cost: 0, key: 'key_a' }),
        report(days[0], 'gpt-4o-mini-2024-07-18', { input: 0, cached: 0, output: 0, cost: 1.5 }),
        report(days[1], 'gpt-4o-mini'),
      ],
      days,
      threshold,
    );
    assert.equal(c.over, false, c.reasons.join('; '));
    assert.deepEqual(
      c.lines.map((l) => [l.day, l.model, l.status, l.keys]),
      [
        [days[0], 'gpt-4o-mini', 'match', ['key_a', 'key_b']],
        [days[1], 'gpt-4o-mini', 'match', []],
      ],
    );
    assert.deepEqual(c.totals.drift, { input: 0, cached: 0, output: 0, cost: 0 });
  });

  it('measures a token drift and a cost drift in absolute and relative terms', () => {
    const c = compareRows(
      [ledger(days[0], 'm', { output: 450 }), ledger(days[1], 'm', { cost: 1.0 })],
      [report(days[0], 'm'), report(days[1], 'm')],
      days,
      threshold,
    );
    const [tokens, cost] = c.lines;
    assert.equal(tokens.status, 'drift');
    assert.equal(tokens.drift.output, 50);
    assert.equal(tokens.relative.output, 0.1);
    assert.equal(tokens.over, true);
    assert.equal(cost.drift.cost, 0.5);
    assert.equal(Number(cost.relative.cost.toFixed(4)), 0.3333);
    assert.equal(c.totals.drift.cost, 0.5);
    assert.equal(c.over, true);
    assert.equal(c.reasons.length, 3, c.reasons.join('; '));
  });

  it('keeps a drift under both bounds from failing the check', () => {
    const c = compareRows([ledger(days[0], 'm', { cost: 1.495 })], [report(days[0], 'm')], [days[0]], threshold);
    assert.equal(c.lines[0].status, 'drift');
    assert.equal(c.over, false);
  });

  it('names the days one side has no rows for', () => {
    const c = compareRows([ledger(days[0], 'm'), ledger(days[1], 'm')], [report(days[0], 'm')], days, threshold);
    assert.deepEqual(c.missingDays, [{ day: days[1], missingIn: 'report' }]);
    assert.equal(c.lines[1].status, 'missing_in_report');
    assert.equal(c.over, true);
    const other = compareRows([ledger(days[0], 'm')], [report(days[0], 'm'), report(days[1], 'm')], days, threshold);
    assert.deepEqual(other.missingDays, [{ day: days[1], missingIn: 'ledger' }]);
  });

  it('lists the rows the ledger priced at 0 that the provider billed', () => {
    const c = compareRows(
      [ledger(days[0], 'new-model', { cost: 0, unpriced: 10 })],
      [report(days[0], 'new-model', { cost: 2.25 })],
      [days[0]],
      threshold,
    );
    assert.equal(c.zeroPriced.length, 1);
    assert.equal(c.zeroPriced[0].report.cost, 2.25);
    assert.equal(c.zeroPriced[0].status, 'zero_priced');
    assert.match(c.reasons.join('\n'), /new-model: priced at 0 in the ledger, billed \$2\.250000/);
  });

  it('leaves out rows outside the range', () => {
    const c = compareRows([ledger('2026-10-31', 'm')], [report('2026-11-03', 'm')], days, threshold);
    assert.deepEqual(c.lines, []);
    assert.equal(c.over, false);
  });

  it('compares dated snapshots with their alias', () => {
    assert.equal(modelKey('claude-sonnet-4-20250514'), 'claude-sonnet-4');
    assert.equal(modelKey('gpt-4o-2024-08-06'), 'gpt-4o');
    assert.equal(modelKey('o3'), 'o3');
  });
});

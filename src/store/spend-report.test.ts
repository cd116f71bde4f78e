import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SpendCell } from './spend-cells.ts';
import { buildReport, nextPeriod, periodStart, periodsOf } from './spend-report.ts';

const DAY = 86_400_000;
const cell = (start: number, fields: Partial<SpendCell>): SpendCell => ({
  start,
  projectId: 'p',
  keyId: 'k',
  provider: 'openai',
  model: 'small',
  requests: 1,
  errors: 0,
  inputTokens: 10,
  cachedInputTokens: 0,
  outputTokens: 5,
  costUsd: 0.5,
  ...fields,
});

describe('spend report periods (UTC)', () => {
  it('starts and steps hours, days and months, across a month and a leap day', () => {
    const t = Date.UTC(2028, 1, 29, 13, 45);
    assert.equal(periodStart('hour', t), Date.UTC(2028, 1, 29, 13));
    assert.equal(periodStart('day', t), Date.UTC(2028, 1, 29));
    assert.equal(periodStart('month', t), Date.UTC(2028, 1, 1));
    assert.equal(nextPeriod('month', Date.UTC(2028, 11, 1)), Date.UTC(2029, 0, 1));
    assert.deepEqual(periodsOf('month', Date.UTC(2028, 0, 1), Date.UTC(2028, 3, 1)).length, 3);
  });
});

describe('buildReport', () => {
  const jan31 = Date.UTC(2026, 0, 31);
  const feb1 = Date.UTC(2026, 1, 1);

  it('sums days into months, every period of the range in the series, groups costliest first', () => {
    const cells = [cell(jan31, {}), cell(feb1, { keyId: 'k2', costUsd: 2 }), cell(feb1 + DAY, {})];
    const report = buildReport(cells, cells, ['key'], 'month', [Date.UTC(2025, 11, 1), Date.UTC(2026, 0, 1), feb1]);
    assert.equal(report.totals.costUsd, 3);
    assert.deepEqual(
      report.series.map((p) => p.sums.costUsd),
      [0, 0.5, 2.5],
    );
    assert.deepEqual(
      report.groups.map((g) => [g.key.key, g.sums.costUsd, g.series.map((p) => p.start)]),
      [
        ['k2', 2, [feb1]],
        ['k', 1, [Date.UTC(2026, 0, 1), feb1]],
      ],
    );
  });

  it('takes totals from the untagged cells and groups from the tag cells, which may overlap', () => {
    const untagged = [cell(feb1, { costUsd: 1 })];
    const tagged = [cell(feb1, { tag: 'a', costUsd: 1 }), cell(feb1, { tag: 'b', costUsd: 1 })];
    const report = buildReport(untagged, tagged, ['tag', 'model'], 'day', [feb1]);
    assert.equal(report.totals.costUsd, 1);
    assert.deepEqual(
      report.groups.map((g) => g.key),
      [
        { tag: 'a', model: 'openai/small' },
        { tag: 'b', model: 'openai/small' },
      ],
    );
  });
});

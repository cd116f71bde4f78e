import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cutoffsOf } from './ledger-upkeep.ts';

const DAY = 86_400_000;
const now = Date.UTC(2026, 10, 29);

describe('the retention cutoffs', () => {
  it('keep everything when nothing is set', () => {
    assert.deepEqual(cutoffsOf({ rollupDays: {} }, now), { rows: undefined, content: undefined, rollups: [] });
  });

  it('never keep content longer than its rows', () => {
    assert.equal(cutoffsOf({ rowsDays: 30, rollupDays: {} }, now).content, now - 30 * DAY);
    assert.equal(cutoffsOf({ rowsDays: 30, contentDays: 90, rollupDays: {} }, now).content, now - 30 * DAY);
    assert.equal(cutoffsOf({ rowsDays: 30, contentDays: 7, rollupDays: {} }, now).content, now - 7 * DAY);
    assert.equal(cutoffsOf({ contentDays: 7, rollupDays: {} }, now).content, now - 7 * DAY);
  });

  it('give each rollup table the days of its resolution', () => {
    assert.deepEqual(cutoffsOf({ rollupDays: { minute: 2, hour: 400, day: 3650 } }, now).rollups, [
      { table: 'ledger_minutes', column: 'minute', cutoff: now - 2 * DAY },
      { table: 'ledger_minutes_all', column: 'minute', cutoff: now - 2 * DAY },
      { table: 'ledger_minute_histograms', column: 'minute', cutoff: now - 2 * DAY },
      { table: 'ledger_hours', column: 'hour', cutoff: now - 400 * DAY },
      { table: 'spend_hours', column: 'period_start', cutoff: now - 400 * DAY },
      { table: 'spend_tag_hours', column: 'period_start', cutoff: now - 400 * DAY },
      { table: 'spend_days', column: 'period_start', cutoff: now - 3650 * DAY },
      { table: 'spend_tag_days', column: 'period_start', cutoff: now - 3650 * DAY },
      { table: 'spend_project_days', column: 'period_start', cutoff: now - 3650 * DAY },
    ]);
    assert.deepEqual(cutoffsOf({ rollupDays: { minute: 2 } }, now).rollups, [
      { table: 'ledger_minutes', column: 'minute', cutoff: now - 2 * DAY },
      { table: 'ledger_minutes_all', column: 'minute', cutoff: now - 2 * DAY },
      { table: 'ledger_minute_histograms', column: 'minute', cutoff: now - 2 * DAY },
    ]);
  });
});

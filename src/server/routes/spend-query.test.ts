import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { parseSpendQuery } from './spend-query.ts';

const NOW = Date.UTC(2026, 10, 28, 10, 30);
const parse = (query: string, accept?: string) => parseSpendQuery(new URLSearchParams(query), accept, NOW);
const refused = (query: string): string | null => {
  try {
    parse(query);
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.status, 400);
    return err.param;
  }
  assert.fail(`${query} was taken`);
};

describe('parseSpendQuery', () => {
  it('defaults to the last 30 days by day, JSON, no grouping', () => {
    const q = parse('');
    assert.deepEqual(q.groupBy, []);
    assert.equal(q.period, 'day');
    assert.equal(q.format, 'json');
    assert.equal(q.filter.to, Date.UTC(2026, 10, 29));
    assert.equal(q.filter.from, Date.UTC(2026, 9, 30));
  });

  it('aligns from and to to the period; to is exclusive', () => {
    const q = parse('period=month&from=2026-01-15&to=2026-03-01T00:00:00Z&group_by=tag,project,tag');
    assert.deepEqual(q.groupBy, ['tag', 'project']);
    assert.equal(q.filter.from, Date.UTC(2026, 0, 1));
    assert.equal(q.filter.to, Date.UTC(2026, 2, 1));
    assert.equal(parse(`period=hour&to=${NOW}`).filter.to, Date.UTC(2026, 10, 28, 11));
  });

  it('asks for CSV by format=csv or Accept: text/csv', () => {
    assert.equal(parse('format=csv').format, 'csv');
    assert.equal(parse('', 'text/csv').format, 'csv');
  });

  it('refuses a bad parameter with a 400 naming it', () => {
    assert.equal(refused('group_by=team'), 'group_by');
    assert.equal(refused('period=week'), 'period');
    assert.equal(refused('format=xml'), 'format');
    assert.equal(refused('from=yesterday'), 'from');
    assert.equal(refused('to=1.5'), 'to');
    assert.equal(refused('from=2026-11-28&to=2026-11-01'), 'from');
    assert.equal(refused('period=hour&from=2025-01-01'), 'from');
    assert.equal(refused('tag=a%00b'), 'tag');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addInto, boundSeries, modelSeriesName, OTHER, providerSeriesName, REFUSED } from './chart-series.ts';

const sum = (s: number[]) => s.reduce((a, b) => a + b, 0);
const bound = (series: Map<string, number[]>, max: number) => boundSeries(series, sum, addInto, () => [0, 0], max);

describe('chart series', () => {
  it('keeps every series, largest first, when they fit', () => {
    const out = bound(
      new Map([
        ['a/x', [1, 0]],
        ['b/y', [2, 3]],
      ]),
      3,
    );
    assert.deepEqual(
      [...out],
      [
        ['b/y', [2, 3]],
        ['a/x', [1, 0]],
      ],
    );
  });

  it('bounds the legend: the largest and one "other" summing the rest, period by period', () => {
    const series = new Map<string, number[]>();
    for (let i = 1; i <= 20; i++) series.set(`p/m${String(i).padStart(2, '0')}`, [i, 1]);
    const out = bound(series, 4);
    assert.deepEqual([...out.keys()], ['p/m20', 'p/m19', 'p/m18', OTHER]);
    // m01..m17: 1+...+17 = 153 in the first period, 17 in the second; nothing lost.
    assert.deepEqual(out.get(OTHER), [153, 17]);
    assert.equal(sum([...out.values()].map(sum)), sum([...series.values()].map(sum)));
  });

  it('orders equal volumes by name, so a refresh does not reorder the legend', () => {
    const out = bound(
      new Map([
        ['c', [1, 0]],
        ['a', [1, 0]],
        ['b', [1, 0]],
      ]),
      5,
    );
    assert.deepEqual([...out.keys()], ['a', 'b', 'c']);
  });

  it('names the rows of requests refused before routing instead of "/"', () => {
    assert.equal(modelSeriesName('', ''), REFUSED);
    assert.equal(modelSeriesName('openai', 'gpt-4o'), 'openai/gpt-4o');
    assert.equal(providerSeriesName(''), REFUSED);
    assert.equal(providerSeriesName('mock'), 'mock');
  });
});

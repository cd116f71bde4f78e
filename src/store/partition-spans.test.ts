import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextSpan, parseBounds, partitionName, spansBetween, spanStart } from './partition-spans.ts';

const at = (iso: string) => Date.parse(iso);

describe('partition spans', () => {
  it('start at the UTC month or day a time falls in', () => {
    assert.equal(spanStart('month', at('2026-11-28T23:59:59.999Z')), at('2026-11-01T00:00:00Z'));
    assert.equal(spanStart('day', at('2026-11-28T23:59:59.999Z')), at('2026-11-28T00:00:00Z'));
    assert.equal(spanStart('month', at('2026-12-01T00:00:00Z')), at('2026-12-01T00:00:00Z'));
  });

  it('follow each other across a year and a leap day', () => {
    assert.equal(nextSpan('month', at('2026-12-01T00:00:00Z')), at('2027-01-01T00:00:00Z'));
    assert.equal(nextSpan('day', at('2028-02-28T00:00:00Z')), at('2028-02-29T00:00:00Z'));
    assert.deepEqual(spansBetween('month', at('2026-11-15T00:00:00Z'), at('2027-01-02T00:00:00Z')), [
      at('2026-11-01T00:00:00Z'),
      at('2026-12-01T00:00:00Z'),
      at('2027-01-01T00:00:00Z'),
    ]);
    assert.deepEqual(spansBetween('day', at('2026-11-28T12:00:00Z'), at('2026-11-28T13:00:00Z')), [at('2026-11-28T00:00:00Z')]);
  });

  it('name a partition by what it holds', () => {
    assert.equal(partitionName('ledger', 'month', at('2026-11-01T00:00:00Z')), 'ledger_p2026_11');
    assert.equal(partitionName('ledger_content', 'day', at('2026-11-28T00:00:00Z')), 'ledger_content_p2026_11_28');
  });

  it("read PostgreSQL's text of a range partition's bounds, and nothing else", () => {
    assert.deepEqual(parseBounds("FOR VALUES FROM ('1764547200000') TO ('1767225600000')"), {
      from: 1764547200000,
      to: 1767225600000,
    });
    assert.deepEqual(parseBounds('FOR VALUES FROM (1) TO (2)'), { from: 1, to: 2 });
    assert.equal(parseBounds('DEFAULT'), undefined);
  });
});

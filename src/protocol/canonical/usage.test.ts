import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_TOKEN_COUNT, normalizeTokenCounts, sumTokenCounts, toOpenAIUsage } from './usage.ts';

describe('normalizeTokenCounts', () => {
  it('one bad record does not stop the ledger: every upstream count becomes a safe integer, the bad ones flagged', () => {
    const { counts, invalid } = normalizeTokenCounts({
      ok: 12,
      zero: 0,
      fractional: 1.5,
      huge: 1e308,
      beyond_js: 2 ** 53,
      array: [] as unknown,
      string: '12' as unknown,
      negative: -3,
      nan: Number.NaN,
      infinity: Number.POSITIVE_INFINITY,
      object: { n: 1 } as unknown,
      absent: undefined,
      nullish: null,
    });
    assert.deepEqual(counts, {
      ok: 12,
      zero: 0,
      fractional: 1,
      huge: MAX_TOKEN_COUNT,
      beyond_js: MAX_TOKEN_COUNT,
      array: 0,
      string: 0,
      negative: 0,
      nan: 0,
      infinity: 0,
      object: 0,
    });
    assert.deepEqual(invalid, ['array', 'string', 'negative', 'nan', 'infinity', 'object']);
  });

  it('the cap fits a PostgreSQL integer column and sums stay exact JS integers', () => {
    assert.equal(MAX_TOKEN_COUNT, 2 ** 31 - 1);
    assert.equal(sumTokenCounts(MAX_TOKEN_COUNT, MAX_TOKEN_COUNT, undefined), MAX_TOKEN_COUNT);
    assert.equal(sumTokenCounts(1, undefined, 2), 3);
    const usage = toOpenAIUsage({ inputTokens: MAX_TOKEN_COUNT, outputTokens: MAX_TOKEN_COUNT, source: 'provider' });
    assert.ok(Number.isSafeInteger(usage.total_tokens));
  });
});

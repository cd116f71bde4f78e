import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readRateLimitHeaders, resetIn } from './rate-limit-headers.ts';

describe('readRateLimitHeaders', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it("reads OpenAI's remaining counts and durations", () => {
    const learned = readRateLimitHeaders(
      {
        'x-ratelimit-remaining-requests': '59',
        'x-ratelimit-reset-requests': '1s',
        'x-ratelimit-remaining-tokens': '149984',
        'x-ratelimit-reset-tokens': '6m0s',
      },
      now,
    );
    assert.deepEqual(learned, {
      requests: { remaining: 59, resetAt: now + 1000 },
      tokens: { remaining: 149984, resetAt: now + 360_000 },
    });
  });

  it('leaves out a limit whose remaining count or reset is missing or unreadable', () => {
    assert.deepEqual(readRateLimitHeaders({ 'x-ratelimit-remaining-requests': '3' }, now), {});
    assert.deepEqual(readRateLimitHeaders({ 'x-ratelimit-remaining-tokens': 'many', 'x-ratelimit-reset-tokens': '1s' }, now), {});
    assert.deepEqual(readRateLimitHeaders({ 'x-ratelimit-remaining-tokens': '', 'x-ratelimit-reset-tokens': '1s' }, now), {});
  });
});

describe('resetIn', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads durations, seconds and dates', () => {
    assert.equal(resetIn('20ms', now), 20);
    assert.equal(resetIn('1m2.5s', now), 62_500);
    assert.equal(resetIn('2', now), 2000);
    assert.equal(resetIn('2026-01-01T00:00:03Z', now), 3000);
  });
  it('caps a far reset at ten minutes and reads nothing from junk', () => {
    assert.equal(resetIn('5h', now), 600_000);
    assert.equal(resetIn('soon', now), null);
    assert.equal(resetIn('', now), null);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatResetDuration, rateLimitHeaders, retryAfterHeaders } from './rate-limit-headers.ts';

describe('rate limit headers', () => {
  it("write resets as OpenAI's x-ratelimit-reset-* do", () => {
    assert.equal(formatResetDuration(20), '20ms');
    assert.equal(formatResetDuration(1_000), '1s');
    assert.equal(formatResetDuration(8_640), '8.64s');
    assert.equal(formatResetDuration(360_000), '6m0s');
    assert.equal(formatResetDuration(3_723_500), '1h2m3.5s');
  });

  it('give the OpenAI set and the IETF fields (draft-ietf-httpapi-ratelimit-headers) of each limit', () => {
    assert.deepEqual(
      rateLimitHeaders({
        requests: { limit: 60, remaining: 59, resetMs: 42_100 },
        tokens: { limit: 10_000, remaining: 9_000, resetMs: 6_000 },
        concurrency: { limit: 4, remaining: 3, resetMs: 0 },
      }),
      {
        'x-ratelimit-limit-requests': '60',
        'x-ratelimit-remaining-requests': '59',
        'x-ratelimit-reset-requests': '42.1s',
        'x-ratelimit-limit-tokens': '10000',
        'x-ratelimit-remaining-tokens': '9000',
        'x-ratelimit-reset-tokens': '6s',
        'ratelimit-policy': '"requests";q=60;w=60, "concurrency";q=4;qu="concurrent-requests"',
        ratelimit: '"requests";r=59;t=43, "concurrency";r=3',
      },
    );
    assert.deepEqual(rateLimitHeaders({}), {});
  });

  it('Retry-After is whole seconds, at least 1; retry-after-ms is exact', () => {
    assert.deepEqual(retryAfterHeaders(1_200), { 'retry-after': '2', 'retry-after-ms': '1200' });
    assert.deepEqual(retryAfterHeaders(0), { 'retry-after': '1', 'retry-after-ms': '1' });
  });
});

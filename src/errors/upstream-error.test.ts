import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { upstreamHttpError } from './upstream-error.ts';

describe('upstreamHttpError: one status policy for every provider', () => {
  const map = (status: number, message = 'upstream says no', headers = {}) => upstreamHttpError({ provider: 'acme', status, message, headers });

  it('maps each upstream status to what the client should see', () => {
    const table: [number, number, string, string][] = [
      [400, 400, 'invalid_request_error', 'invalid_request'],
      [401, 502, 'upstream_error', 'upstream_authentication_failed'],
      [402, 502, 'upstream_error', 'upstream_billing_error'],
      [403, 502, 'upstream_error', 'upstream_authentication_failed'],
      [404, 404, 'invalid_request_error', 'model_not_found'],
      [408, 504, 'timeout_error', 'upstream_timeout'],
      [413, 413, 'invalid_request_error', 'invalid_request'],
      [422, 400, 'invalid_request_error', 'invalid_request'],
      [429, 429, 'rate_limit_error', 'rate_limit_exceeded'],
      [500, 502, 'upstream_error', 'upstream_error'],
      [503, 503, 'server_error', 'upstream_overloaded'],
      [504, 504, 'timeout_error', 'upstream_timeout'],
      [529, 503, 'server_error', 'upstream_overloaded'],
    ];
    for (const [upstream, status, type, code] of table) {
      const err = map(upstream);
      assert.deepEqual([err.status, err.type, err.code, err.upstreamStatus], [status, type, code, upstream], `HTTP ${upstream}`);
    }
  });

  it("keeps the upstream's message, and never answers with an empty one", () => {
    assert.equal(map(400).message, 'upstream says no');
    assert.match(map(402).message, /^acme refused the request for billing reasons: upstream says no$/);
    assert.equal(map(500, '  ').message, 'acme returned HTTP 500 with no error message.');
  });

  it('regression: an empty or blank upstream code falls back to the status code (the error frame had `"code":""`)', () => {
    for (const upstreamCode of ['', '  ']) {
      assert.equal(upstreamHttpError({ provider: 'acme', status: 500, message: 'x', upstreamCode }).code, 'upstream_error');
    }
  });

  it("passes the retry hints the openai SDK obeys and the upstream's x-ratelimit-* state, and nothing else", () => {
    const err = map(429, 'slow down', { 'retry-after': '7', 'retry-after-ms': '7000', 'x-ratelimit-limit-requests': '10', server: 'upstream' });
    assert.deepEqual(err.headers, { 'retry-after': '7', 'retry-after-ms': '7000', 'x-ratelimit-limit-requests': '10' });
    assert.equal(err.retryable, true);
  });
});

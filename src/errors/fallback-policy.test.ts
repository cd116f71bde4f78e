import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errors } from './catalog.ts';
import { fallbackReason } from './fallback-policy.ts';
import { upstreamHttpError } from './upstream-error.ts';

const http = (status: number, upstreamCode?: string) => fallbackReason(upstreamHttpError({ provider: 'p', status, message: 'm', upstreamCode }));

describe('fallbackReason', () => {
  it('falls back on 408, 429 and 5xx, and on refused credentials or billing', () => {
    assert.deepEqual(
      [http(408), http(429), http(500), http(502), http(503), http(504), http(529), http(401), http(402)],
      ['timeout', 'rate_limited', 'upstream_error', 'upstream_error', 'overloaded', 'timeout', 'overloaded', 'upstream_account', 'upstream_account'],
    );
  });

  it('never on a bad request: it would fail the same way anywhere', () => {
    assert.deepEqual([http(400), http(404), http(413), http(422), http(400, 'context_length_exceeded')], [null, null, null, null, null]);
  });

  it('on failures of the stream itself', () => {
    assert.equal(fallbackReason(errors.connection('p', 'ECONNREFUSED')), 'connection_error');
    assert.equal(fallbackReason(errors.truncated('p')), 'stream_failed');
    assert.equal(fallbackReason(errors.malformed('p', 'bad JSON')), 'stream_failed');
    assert.equal(fallbackReason(errors.idleTimeout(5)), 'timeout');
  });

  it("never after the client's cancellation, sluice's deadline or a sluice bug", () => {
    assert.equal(fallbackReason(errors.cancelled('client gone')), null);
    assert.equal(fallbackReason(errors.deadline(30)), null);
    assert.equal(fallbackReason(errors.shuttingDown()), null);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { anthropicStreamError, mapAnthropicError } from './map-error.ts';

const body = (type: string, message: string) => JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_1' });

function summary(e: ReturnType<typeof mapAnthropicError>) {
  return {
    status: e.status,
    type: e.type,
    code: e.code,
    upstreamType: e.upstreamType,
    message: e.message,
    retryable: e.retryable,
    headers: e.headers,
  };
}

describe('anthropic errors', () => {
  it('maps HTTP error bodies with the status policy and keeps the message', () => {
    assert.deepEqual(summary(mapAnthropicError(400, {}, body('invalid_request_error', 'max_tokens: Field required'))), {
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_request',
      upstreamType: 'invalid_request_error',
      message: 'max_tokens: Field required',
      retryable: false,
      headers: {},
    });
    assert.deepEqual(summary(mapAnthropicError(529, {}, body('overloaded_error', 'Overloaded'))), {
      status: 503,
      type: 'server_error',
      code: 'upstream_overloaded',
      upstreamType: 'overloaded_error',
      message: 'Overloaded',
      retryable: true,
      headers: {},
    });
    assert.deepEqual(
      summary(mapAnthropicError(429, { 'retry-after': '7' }, body('rate_limit_error', 'Number of requests has exceeded your rate limit'))),
      {
        status: 429,
        type: 'rate_limit_error',
        code: 'rate_limit_exceeded',
        upstreamType: 'rate_limit_error',
        message: 'Number of requests has exceeded your rate limit',
        retryable: true,
        headers: { 'retry-after': '7' },
      },
    );
    const auth = mapAnthropicError(401, {}, body('authentication_error', 'invalid x-api-key'));
    assert.equal(auth.status, 502);
    assert.equal(auth.message, "anthropic refused sluice's credentials: invalid x-api-key");
    assert.equal(auth.provider, 'anthropic');
  });

  it('keeps a body that is not Anthropic JSON as the message', () => {
    const e = mapAnthropicError(502, {}, '<html>Bad Gateway</html>');
    assert.deepEqual([e.status, e.code, e.message], [502, 'upstream_error', '<html>Bad Gateway</html>']);
  });

  it("gives in-stream errors the status their type has over HTTP, sluice's code, and keeps the type beside it", () => {
    const cases = [
      ['overloaded_error', 503, 'upstream_overloaded'],
      ['rate_limit_error', 429, 'rate_limit_exceeded'],
      ['api_error', 502, 'upstream_error'],
      ['timeout_error', 504, 'upstream_timeout'],
      ['invalid_request_error', 400, 'invalid_request'],
      ['made_up_error', 502, 'upstream_error'],
    ] as const;
    for (const [type, status, code] of cases) {
      const e = anthropicStreamError({ type: 'error', error: { type, message: `m ${type}` } });
      assert.deepEqual([e.status, e.code, e.upstreamType, e.message, e.provider], [status, code, type, `m ${type}`, 'anthropic'], type);
    }
    const bare = anthropicStreamError({ type: 'error' });
    assert.deepEqual([bare.status, bare.message], [502, 'anthropic sent a stream error event with no message (no type).']);
  });
});

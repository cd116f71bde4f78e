import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { googleStreamError, mapGoogleError } from './map-error.ts';

const body = (code: number, status: string, message: string, details?: unknown[]) =>
  JSON.stringify({ error: { code, message, status, ...(details && { details }) } });

/** The fields of a GatewayError a client sees, plus the policy flags. */
const seen = (e: ReturnType<typeof mapGoogleError>) => ({
  status: e.status,
  type: e.type,
  code: e.code,
  message: e.message,
  retryable: e.retryable,
  headers: e.headers,
  provider: e.provider,
  upstreamStatus: e.upstreamStatus,
});

describe('mapGoogleError', () => {
  it('a bad request keeps its status and Google message', () => {
    const e = mapGoogleError('google', 400, {}, body(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified\n'));
    assert.deepEqual(seen(e), {
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_request',
      message: '* GenerateContentRequest.contents: contents is not specified',
      retryable: false,
      headers: {},
      provider: 'google',
      upstreamStatus: 400,
    });
  });

  it("a refused API key (400 API_KEY_INVALID) is sluice's credential failing: 502", () => {
    const e = mapGoogleError(
      'google',
      400,
      {},
      body(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' },
      ]),
    );
    assert.equal(e.status, 502);
    assert.equal(e.code, 'upstream_authentication_failed');
    assert.equal(e.message, "google refused sluice's credentials: API key not valid. Please pass a valid API key.");
  });

  it('quota exhaustion is a 429 with Retry-After passed on', () => {
    const e = mapGoogleError('google', 429, { 'retry-after': '7' }, body(429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota.'));
    assert.deepEqual(
      [e.status, e.type, e.code, e.message, e.retryable, e.headers],
      [429, 'rate_limit_error', 'rate_limit_exceeded', 'You exceeded your current quota.', true, { 'retry-after': '7' }],
    );
  });

  it('overloaded is 503, an unknown model 404, an internal error 502', () => {
    const overloaded = mapGoogleError('google', 503, {}, body(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'));
    assert.deepEqual(
      [overloaded.status, overloaded.code, overloaded.message],
      [503, 'upstream_overloaded', 'The model is overloaded. Please try again later.'],
    );
    const missing = mapGoogleError('google', 404, {}, body(404, 'NOT_FOUND', 'models/gemini-9 is not found for API version v1beta.'));
    assert.deepEqual([missing.status, missing.code], [404, 'model_not_found']);
    const internal = mapGoogleError('google', 500, {}, body(500, 'INTERNAL', 'An internal error has occurred.'));
    assert.deepEqual([internal.status, internal.code, internal.retryable], [502, 'upstream_error', true]);
  });

  it('an array-wrapped status and a body that is not JSON are read too', () => {
    const wrapped = mapGoogleError('google', 400, {}, `[${body(400, 'INVALID_ARGUMENT', 'Bad tool.')}]`);
    assert.equal(wrapped.message, 'Bad tool.');
    const html = mapGoogleError('google', 502, {}, '<html>Bad Gateway</html>');
    assert.deepEqual([html.status, html.message], [502, '<html>Bad Gateway</html>']);
    const empty = mapGoogleError('google', 500, {}, '');
    assert.equal(empty.message, 'google returned HTTP 500 with no error message.');
  });
});

describe('googleStreamError', () => {
  it('takes the status from the code, or from the status name', () => {
    const byCode = googleStreamError('google', { error: { code: 503, message: 'Overloaded.', status: 'UNAVAILABLE' } });
    assert.deepEqual([byCode.status, byCode.message], [503, 'Overloaded.']);
    const byName = googleStreamError('google', { error: { message: 'Quota.', status: 'RESOURCE_EXHAUSTED' } });
    assert.deepEqual([byName.status, byName.type], [429, 'rate_limit_error']);
    const deadline = googleStreamError('google', {
      error: { status: 'DEADLINE_EXCEEDED', message: 'Deadline expired before operation could complete.' },
    });
    assert.equal(deadline.status, 504);
  });

  it('an error without code or known status is a 502 with a description', () => {
    const e = googleStreamError('google', { error: {} });
    assert.deepEqual([e.status, e.message], [502, 'google reported an error in the stream.']);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errors } from '../errors/catalog.ts';
import { upstreamHttpError } from '../errors/upstream-error.ts';
import { anthropicErrorBody, anthropicErrorStatus } from './anthropic-errors.ts';

describe('Anthropic-shaped errors', () => {
  it("gives each failure Anthropic's type and status, the field named in the message", () => {
    const cases = [
      [errors.invalidRequest("Invalid value for 'max_tokens': Too small.", 'max_tokens'), 'invalid_request_error', 400],
      [errors.invalidRequest('must be an integer.', 'top_k'), 'invalid_request_error', 400],
      [errors.missingKey(), 'authentication_error', 401],
      [errors.modelNotAllowed('openai/gpt-4o'), 'permission_error', 403],
      [errors.modelNotFound('nope/x', 'no provider nope'), 'not_found_error', 404],
      [errors.bodyTooLarge(10), 'request_too_large', 413],
      [errors.rateLimited('Slow down.', {}), 'rate_limit_error', 429],
      [errors.quotaExceeded('Budget spent.', {}), 'billing_error', 402],
      [upstreamHttpError({ provider: 'google', status: 503, message: 'Overloaded.' }), 'overloaded_error', 529],
      [upstreamHttpError({ provider: 'openai', status: 504, message: 'Slow.' }), 'timeout_error', 504],
      [errors.truncated('openai'), 'api_error', 500],
      [errors.shuttingDown(), 'overloaded_error', 529],
      [errors.methodNotAllowed('GET', '/v1/messages'), 'invalid_request_error', 405],
    ] as const;
    for (const [error, type, status] of cases) {
      assert.equal(anthropicErrorBody(error).error.type, type, error.message);
      assert.equal(anthropicErrorStatus(error), status, error.message);
    }
    assert.deepEqual(anthropicErrorBody(errors.invalidRequest('must be an integer.', 'top_k')), {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'top_k: must be an integer.' },
    });
  });

  it("keeps an Anthropic upstream's own error type", () => {
    const error = upstreamHttpError({ provider: 'anthropic', status: 500, message: 'Internal.', upstreamType: 'api_error' });
    assert.equal(anthropicErrorBody(error).error.type, 'api_error');
    const overloaded = upstreamHttpError({ provider: 'anthropic', status: 529, message: 'Overloaded', upstreamType: 'overloaded_error' });
    assert.deepEqual(anthropicErrorBody(overloaded), { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    assert.equal(anthropicErrorStatus(overloaded), 529);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFixture } from '../../../test/helpers/fixtures.ts';
import { bedrockStreamException, mapBedrockError } from './map-error.ts';

const errorType = (name: string) => ({ 'x-amzn-errortype': `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/` });

describe('mapBedrockError', () => {
  it('maps the recorded 400 (invalid model id) with its message kept', () => {
    const body = readFixture('bedrock/converse-error-400-invalid-model.json').toString('utf8');
    const err = mapBedrockError(400, errorType('ValidationException'), body);
    assert.deepEqual(
      {
        status: err.status,
        type: err.type,
        code: err.code,
        upstreamType: err.upstreamType,
        message: err.message,
        provider: err.provider,
        upstream: err.upstreamStatus,
      },
      {
        status: 400,
        type: 'invalid_request_error',
        code: 'invalid_request',
        upstreamType: 'ValidationException',
        message: 'The provided model identifier is invalid.',
        provider: 'bedrock',
        upstream: 400,
      },
    );
  });

  it('throttling is a retryable 429 with Retry-After passed on', () => {
    const err = mapBedrockError(
      429,
      { ...errorType('ThrottlingException'), 'retry-after': '3' },
      '{"message":"Too many requests, please wait before trying again."}',
    );
    assert.deepEqual(
      { status: err.status, code: err.code, upstreamType: err.upstreamType, message: err.message, retryable: err.retryable, headers: err.headers },
      {
        status: 429,
        code: 'rate_limit_exceeded',
        upstreamType: 'ThrottlingException',
        message: 'Too many requests, please wait before trying again.',
        retryable: true,
        headers: { 'retry-after': '3' },
      },
    );
  });

  it("the model's own failure (424 ModelErrorException) is a 502, not the client's fault", () => {
    const err = mapBedrockError(424, errorType('ModelErrorException'), '{"message":"The model returned an error."}');
    assert.deepEqual([err.status, err.type, err.message], [502, 'upstream_error', 'The model returned an error.']);
  });

  it('refused credentials are a gateway fault (502), whatever the body key case', () => {
    const err = mapBedrockError(403, errorType('AccessDeniedException'), '{"Message":"User is not authorized to perform bedrock:InvokeModel"}');
    assert.equal(err.status, 502);
    assert.equal(err.message, "bedrock refused sluice's credentials: User is not authorized to perform bedrock:InvokeModel");
  });

  it('reads the exception name from __type without the header, and keeps a non-JSON body as the message', () => {
    const a = mapBedrockError(503, {}, '{"__type":"com.amazon.bedrock#ServiceUnavailableException","message":"Service unavailable"}');
    assert.deepEqual(
      [a.status, a.code, a.upstreamType, a.message],
      [503, 'upstream_overloaded', 'ServiceUnavailableException', 'Service unavailable'],
    );
    const b = mapBedrockError(502, {}, '<html>Bad Gateway</html>');
    assert.deepEqual([b.status, b.code, b.message], [502, 'upstream_error', '<html>Bad Gateway</html>']);
  });
});

describe('bedrockStreamException', () => {
  it('an exception without a message still says what happened', () => {
    const err = bedrockStreamException('modelStreamErrorException', {});
    assert.deepEqual(
      [err.status, err.code, err.upstreamType, err.message],
      [502, 'upstream_error', 'modelStreamErrorException', 'bedrock returned HTTP 502 with no error message.'],
    );
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errors } from './catalog.ts';
import { createRedactor, redactError } from './redact.ts';
import { upstreamHttpError } from './upstream-error.ts';

describe('regression: upstream error text passed a provider key through to the client and the ledger', () => {
  const redact = createRedactor(['sk-test-configured-0123456789', 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', 'master-key-42', undefined, 'short']);

  it('removes every configured secret wherever it appears', () => {
    assert.equal(
      redact('Incorrect API key provided: sk-test-configured-0123456789. You can find your API key at https://platform.openai.com.'),
      'Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com.',
    );
    assert.equal(redact('secret=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY;'), 'secret=[redacted];');
    assert.equal(redact('the key master-key-42 was refused (master-key-42)'), 'the key [redacted] was refused ([redacted])');
  });

  it('removes keys shaped like provider credentials that were not configured', () => {
    const cases: [string, string][] = [
      ['Incorrect API key provided: sk-proj-abc1*****************************************xyz9.', 'Incorrect API key provided: sk-[redacted].'],
      ['key sk-ant-api03-AbCdEf0123456789_-AbCdEf0123456789 invalid', 'key sk-[redacted] invalid'],
      ['sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'sk-[redacted]'],
      ['API key AIzaSyA-1234567890abcdefghijklmnopqrstu is invalid', 'API key AIza[redacted] is invalid'],
      ['The security token AKIAIOSFODNN7EXAMPLE is invalid', 'The security token [redacted] is invalid'],
      ['Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcDEF123456_-x', 'Authorization: Bearer [redacted]'],
      ['token ABSKQmVkcm9ja0FQSUtleS1hYmNkZWZnaGlqa2xtbm9w', 'token ABSK[redacted]'],
      ['gsk_0123456789abcdefABCDEFghij was revoked', '[redacted] was revoked'],
      ['secret 0123456789abcdef0123456789abcdef0a1b', 'secret [redacted]'],
      ['aws secret Zx9yW8vU7tS6rQ5pO4nM3lK2jI1hG0fEdCbA/+zz', 'aws secret [redacted]'],
    ];
    for (const [text, want] of cases) assert.equal(redact(text), want, text);
  });

  it('leaves ordinary error text alone', () => {
    const ordinary = [
      'The model `gpt-4o-mini` does not exist or you do not have access to it.',
      'Rate limit reached for gpt-4o in organization org-AbC123xyz on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2s. Visit https://platform.openai.com/account/rate-limits to learn more.',
      'messages.0.content.1.image_url: Input should be a valid URL',
      'request_id: req_011CSHoEeqs5C35K2UUqR7Fy; trace f4b8c3e2-1a2b-4c5d-8e9f-0123456789ab',
      '(Please include the request ID req_c2d5f03f1e7d4f9a8c0d0f3b1b2a9d7e in your message.)',
      'response resp_05500b38c2cd9bfc00691c7c9d222481a3b595421266dab424 failed',
      'POST https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse failed',
      'Authorization header must be "Bearer <token>"; the Bearer authentication scheme is required',
      'The provided model identifier is invalid: us.anthropic.claude-sonnet-4-20250514-v1:0',
      'scikit-learn task-specific-fine-tuning is not supported; ask-me-anything-assistant-v2 is',
      'Overloaded',
      '',
    ];
    for (const text of ordinary) assert.equal(redact(text), text, text);
  });

  it('ignores configured values too short to be a key', () => {
    assert.equal(redact('a short answer'), 'a short answer');
  });

  it('redacts an upstream error, keeping every other field; returns the same error when clean', () => {
    const err = upstreamHttpError({
      provider: 'openai',
      status: 401,
      message: 'Incorrect API key provided: sk-test-configured-0123456789.',
      upstreamType: 'invalid_request_error',
      upstreamCode: 'invalid_api_key',
      headers: { 'retry-after': '1' },
    });
    const clean = redactError(err, redact);
    assert.equal(clean.message, "openai refused sluice's credentials: Incorrect API key provided: [redacted].");
    assert.deepEqual(
      [clean.code, clean.status, clean.type, clean.upstreamStatus, clean.upstreamType, clean.upstreamCode, clean.provider, clean.fallbackable],
      [err.code, err.status, err.type, err.upstreamStatus, 'invalid_request_error', 'invalid_api_key', err.provider, err.fallbackable],
    );
    const plain = errors.malformed('openai', 'chunk is not JSON: {');
    assert.equal(redactError(plain, redact), plain);
  });
});

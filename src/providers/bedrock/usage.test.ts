import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { convertBedrockUsage } from './usage.ts';

describe('convertBedrockUsage', () => {
  it('passes plain counts through (fixtures/bedrock/converse-text-nova-micro.b64 metadata)', () => {
    assert.deepEqual(convertBedrockUsage({ inputTokens: 13, outputTokens: 82 }), {
      inputTokens: 13,
      outputTokens: 82,
      source: 'provider',
    });
  });

  it('adds cache reads and writes into input, which Bedrock reports beside it', () => {
    assert.deepEqual(convertBedrockUsage({ inputTokens: 12, outputTokens: 40, cacheReadInputTokens: 2048, cacheWriteInputTokens: 300 }), {
      inputTokens: 2360,
      outputTokens: 40,
      cachedInputTokens: 2048,
      cacheWriteTokens: 300,
      source: 'provider',
    });
  });

  it('keeps a reported zero cache count, and treats missing counts as zero', () => {
    assert.deepEqual(convertBedrockUsage({ cacheReadInputTokens: 0 }), {
      inputTokens: 0,
      outputTokens: 0,
      cachedInputTokens: 0,
      source: 'provider',
    });
  });
});

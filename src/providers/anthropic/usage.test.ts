import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { convertAnthropicUsage, mergeAnthropicUsage } from './usage.ts';

describe('anthropic usage', () => {
  it('counts cache reads and cache writes inside inputTokens', () => {
    assert.deepEqual(
      convertAnthropicUsage({
        input_tokens: 4,
        cache_read_input_tokens: 1165,
        cache_creation_input_tokens: 10,
        output_tokens: 221,
      }),
      { inputTokens: 1179, outputTokens: 221, cachedInputTokens: 1165, cacheWriteTokens: 10, source: 'provider' },
    );
  });

  it('leaves the cache fields out when Anthropic does not report them', () => {
    assert.deepEqual(convertAnthropicUsage({ input_tokens: 12, output_tokens: 30 }), {
      inputTokens: 12,
      outputTokens: 30,
      source: 'provider',
    });
  });

  it('lets a later report override only the fields it carries', () => {
    const start = { input_tokens: 506, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 5 };
    assert.deepEqual(mergeAnthropicUsage(start, { output_tokens: 153 }), { ...start, output_tokens: 153 });
    assert.deepEqual(mergeAnthropicUsage(start, { input_tokens: 600, cache_read_input_tokens: null, output_tokens: 9 }), {
      ...start,
      input_tokens: 600,
      output_tokens: 9,
    });
  });
});

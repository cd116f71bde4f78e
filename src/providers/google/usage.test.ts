import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { convertGeminiUsage } from './usage.ts';

describe('convertGeminiUsage', () => {
  it('output includes thoughts; input includes cached and tool-use prompt tokens', () => {
    assert.deepEqual(
      convertGeminiUsage({
        promptTokenCount: 1200,
        cachedContentTokenCount: 1024,
        toolUsePromptTokenCount: 300,
        candidatesTokenCount: 50,
        thoughtsTokenCount: 150,
        totalTokenCount: 1700,
      }),
      { inputTokens: 1500, outputTokens: 200, cachedInputTokens: 1024, reasoningTokens: 150, source: 'provider' },
    );
  });

  it('a non-thinking model has no reasoning count; the total still adds up', () => {
    const raw = { promptTokenCount: 13, candidatesTokenCount: 8, totalTokenCount: 21 };
    const usage = convertGeminiUsage(raw);
    assert.deepEqual(usage, { inputTokens: 13, outputTokens: 8, source: 'provider' });
    assert.equal((usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0), raw.totalTokenCount);
  });

  it('the first chunks carry only the prompt count', () => {
    assert.deepEqual(convertGeminiUsage({ promptTokenCount: 15, totalTokenCount: 15 }), { inputTokens: 15, outputTokens: 0, source: 'provider' });
  });

  it('metadata without counts (Vertex mid-stream `{trafficType}`) is no usage', () => {
    assert.equal(convertGeminiUsage({}), undefined);
    assert.equal(convertGeminiUsage({ trafficType: 'ON_DEMAND' } as never), undefined);
  });
});

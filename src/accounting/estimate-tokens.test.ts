import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { estimateInputTokens, estimateTokens, MIN_SAMPLE_BYTES, utf8Bytes } from './estimate-tokens.ts';

describe('estimateTokens', () => {
  it('is one token per 4 bytes of UTF-8 without a sample, rounded up', () => {
    assert.equal(estimateTokens(0), 0);
    assert.equal(estimateTokens(1), 1);
    assert.equal(estimateTokens(utf8Bytes('Hello, world')), 3);
    // Three bytes a CJK character: ~0.75 tokens a character, near o200k's rate for Chinese prose.
    assert.equal(estimateTokens(utf8Bytes('日本語のテキスト')), 6);
  });

  it("follows the counted part's rate once it is large enough", () => {
    const sample = { tokens: 4000, bytes: 8000 };
    assert.equal(estimateTokens(1000, sample), 500);
    assert.equal(estimateTokens(1000, { tokens: 1, bytes: MIN_SAMPLE_BYTES - 1 }), 250, 'too small a sample is ignored');
    assert.equal(estimateTokens(1000, { tokens: 0, bytes: 0 }), 250);
  });
});

describe('estimateInputTokens', () => {
  it('estimates each embeddings input on its own, without chat framing; token ids count one each', () => {
    // 4, 6 and 10 bytes: 1 + 2 + 3 (the same texts as one chat message were estimated at 12).
    assert.equal(estimateInputTokens(['Ruby', 'Python', 'JavaScript']), 6);
    assert.equal(estimateInputTokens([[1, 2, 3], 'Ruby']), 4);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countInputTokens, countPromptTokens, encodingFor } from './count-tokens.ts';

describe('countInputTokens', () => {
  it('regression: embeddings are over-counted when the provider reports no count: each input alone, no chat framing', async () => {
    const inputs = ['Ruby', 'Python', 'JavaScript'];
    // What the embeddings pipeline counted for Gemini before: the inputs as one chat message, framing included.
    const asChat = { model: 'm', messages: [{ role: 'user' as const, content: inputs.join('\n') }] };
    assert.equal(await countPromptTokens(asChat, 'gemini-embedding-001'), 12);
    // o200k (sluice's count for non-OpenAI models) splits JavaScript in two.
    assert.equal(await countInputTokens(inputs, 'gemini-embedding-001'), 4);
    // What the providers report: OpenAI 3 prompt tokens for the three, Gemini's countTokens 3 for this one.
    assert.equal(await countInputTokens(inputs, 'text-embedding-3-small'), 3);
    assert.equal(await countInputTokens(['The Ruby logo'], 'gemini-embedding-001'), 3);
  });

  it('counts token ids one each, beside the texts', async () => {
    assert.equal(await countInputTokens([[1, 2, 3], [4]], 'text-embedding-3-small'), 4);
    assert.equal(await countInputTokens(['Ruby', [9, 9]], 'text-embedding-3-small'), 3);
  });
});

describe('encodingFor', () => {
  it("is cl100k for gpt-4, gpt-3.5 and OpenAI's embedding models, o200k for the rest", () => {
    for (const model of ['gpt-4', 'openai/gpt-4-turbo', 'gpt-35-turbo', 'text-embedding-3-large', 'openai/text-embedding-ada-002']) {
      assert.equal(encodingFor(model), 'cl100k', model);
    }
    for (const model of ['gpt-4o', 'gpt-4.1-mini', 'gpt-5', 'gemini-embedding-001', 'claude-sonnet-4-5']) {
      assert.equal(encodingFor(model), 'o200k', model);
    }
  });
});

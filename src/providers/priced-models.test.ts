import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchesModelId, pricedModels } from './priced-models.ts';

describe('pricedModels', () => {
  it('lists the pricing registry models of the native providers, under their registry ids', () => {
    assert.ok(pricedModels('anthropic').some((id) => id.startsWith('claude-')));
    assert.ok(pricedModels('google').some((id) => id.startsWith('gemini-')));
    assert.ok(pricedModels('bedrock').some((id) => id.startsWith('anthropic.claude') || id.startsWith('amazon.nova')));
  });

  it("leaves out Vertex's partner models, which the Gemini API does not serve", () => {
    assert.equal(pricedModels('google').filter((id) => id.startsWith('claude-')).length, 0);
  });

  it('lists nothing for a provider that is not native', () => {
    assert.deepEqual(pricedModels('openai'), []);
    assert.deepEqual(pricedModels('mock'), []);
  });
});

describe('matchesModelId', () => {
  it("claude-sonnet-4-20250514 (the Responses reference's example model) is an Anthropic model, as claude-sonnet-4-5 is", () => {
    assert.equal(matchesModelId('anthropic', 'claude-sonnet-4-20250514'), true);
    assert.equal(matchesModelId('openai', 'gpt-4o-2024-08-06'), true);
  });

  it("is not Bedrock's (its API wants its own ids) nor Google's (Vertex's partner models), nor an unknown name", () => {
    assert.equal(matchesModelId('bedrock', 'claude-sonnet-4-20250514'), false);
    assert.equal(matchesModelId('google', 'claude-sonnet-4-20250514'), false);
    assert.equal(matchesModelId('anthropic', 'gpt-9-turbo'), false);
    assert.equal(matchesModelId('my-vllm', 'claude-sonnet-4-20250514'), false);
  });
});

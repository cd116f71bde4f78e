import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pricedModels } from './priced-models.ts';

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

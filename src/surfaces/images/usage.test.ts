import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { imageEventUsage, imagesUsage } from './usage.ts';

const USAGE = { total_tokens: 100, input_tokens: 50, output_tokens: 50, input_tokens_details: { text_tokens: 40, image_tokens: 10 } };

describe('images usage', () => {
  it("a GPT Image answer's tokens, the image tokens among the input, and the images made", () => {
    assert.deepEqual(imagesUsage({ created: 1, data: [{ b64_json: 'x' }, { b64_json: 'y' }], usage: USAGE }), {
      inputTokens: 50,
      outputTokens: 50,
      imageInputTokens: 10,
      units: { images: 2 },
      source: 'provider',
    });
  });

  it('a dall-e answer: its images alone; an answer with neither: none', () => {
    assert.deepEqual(imagesUsage({ created: 1, data: [{ url: 'https://x' }] }), {
      inputTokens: 0,
      outputTokens: 0,
      units: { images: 1 },
      source: 'provider',
    });
    assert.equal(imagesUsage({ created: 1, data: [] }), undefined);
    assert.equal(imagesUsage('not json'), undefined);
  });

  it('counts that are no counts read as 0 and flagged, never thrown over', () => {
    const usage = imagesUsage({ data: [{}], usage: { input_tokens: '12', output_tokens: -1 } });
    assert.deepEqual([usage?.inputTokens, usage?.outputTokens, usage?.invalid], [0, 0, ['input_tokens', 'output_tokens']]);
  });

  it("a stream's usage is each image's completed event's, one image each", () => {
    assert.deepEqual(imageEventUsage('image_edit.completed', { usage: USAGE })?.units, { images: 1 });
    assert.equal(imageEventUsage('image_generation.completed', { usage: USAGE })?.outputTokens, 50);
    assert.equal(imageEventUsage('image_generation.partial_image', { usage: USAGE }), undefined);
  });
});

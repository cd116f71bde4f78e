import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toOpenAIUsage } from '../../protocol/canonical/usage.ts';
import { convertOpenAIFamilyUsage, type OpenAIFamilyUsage } from './convert-usage.ts';

const upstream = (raw: Record<string, unknown>) => raw as OpenAIFamilyUsage;

describe('convertOpenAIFamilyUsage', () => {
  it('one bad record does not stop the ledger: a string count reaches the client as a number, never "122"', () => {
    const usage = convertOpenAIFamilyUsage(upstream({ prompt_tokens: '12', completion_tokens: 2, total_tokens: 14 }));
    assert.deepEqual(usage, { inputTokens: 0, outputTokens: 2, source: 'provider', invalid: ['prompt_tokens'] });
    assert.deepEqual(toOpenAIUsage(usage), { prompt_tokens: 0, completion_tokens: 2, total_tokens: 2 });
  });

  it('one bad record does not stop the ledger: [] / 1.5 / 1e308 prompt_tokens and bad details are normalized', () => {
    assert.equal(convertOpenAIFamilyUsage(upstream({ prompt_tokens: [], completion_tokens: 1 })).inputTokens, 0);
    assert.equal(convertOpenAIFamilyUsage(upstream({ prompt_tokens: 1.5, completion_tokens: 1 })).inputTokens, 1);
    assert.equal(convertOpenAIFamilyUsage(upstream({ prompt_tokens: 1e308, completion_tokens: 1 })).inputTokens, 2 ** 31 - 1);
    const details = convertOpenAIFamilyUsage(
      upstream({
        prompt_tokens: 10,
        completion_tokens: 5,
        prompt_tokens_details: { cached_tokens: -1 },
        completion_tokens_details: { reasoning_tokens: 'many' },
      }),
    );
    assert.deepEqual(details, {
      inputTokens: 10,
      outputTokens: 5,
      cachedInputTokens: 0,
      reasoningTokens: 0,
      source: 'provider',
      invalid: ['cached_tokens', 'reasoning_tokens'],
    });
  });

  it('keeps valid usage as it was: xAI reasoning outside completion_tokens is added back', () => {
    assert.deepEqual(
      convertOpenAIFamilyUsage({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 27, completion_tokens_details: { reasoning_tokens: 12 } }),
      { inputTokens: 10, outputTokens: 17, reasoningTokens: 12, source: 'provider' },
    );
    assert.deepEqual(convertOpenAIFamilyUsage({ prompt_tokens: 3, completion_tokens: 4, prompt_cache_hit_tokens: 2 }), {
      inputTokens: 3,
      outputTokens: 4,
      cachedInputTokens: 2,
      source: 'provider',
    });
  });

  // Hand-made: no recording has non-zero audio or prediction counts (an audio model's and a
  // Predicted Outputs request's usage, in the shape of OpenAI's API reference).
  it('keeps the audio and Predicted Outputs details, and gives them back to the client in the same places', () => {
    const raw = {
      prompt_tokens: 120,
      completion_tokens: 90,
      total_tokens: 210,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 80 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 60, accepted_prediction_tokens: 12, rejected_prediction_tokens: 5 },
    };
    const usage = convertOpenAIFamilyUsage(raw);
    assert.deepEqual(usage, {
      inputTokens: 120,
      outputTokens: 90,
      cachedInputTokens: 0,
      reasoningTokens: 0,
      audioInputTokens: 80,
      audioOutputTokens: 60,
      acceptedPredictionTokens: 12,
      rejectedPredictionTokens: 5,
      source: 'provider',
    });
    assert.deepEqual(toOpenAIUsage(usage), raw);
  });

  it('leaves out details an upstream sent as null (the reference shows them so), and flags a bad one', () => {
    const usage = convertOpenAIFamilyUsage(
      upstream({
        prompt_tokens: 25,
        completion_tokens: 8,
        total_tokens: 33,
        prompt_tokens_details: { cached_tokens: 12, audio_tokens: null },
        completion_tokens_details: { reasoning_tokens: null, audio_tokens: null, accepted_prediction_tokens: 'x', rejected_prediction_tokens: null },
      }),
    );
    assert.deepEqual(usage, {
      inputTokens: 25,
      outputTokens: 8,
      cachedInputTokens: 12,
      acceptedPredictionTokens: 0,
      source: 'provider',
      invalid: ['accepted_prediction_tokens'],
    });
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { convertGeminiLogprobs } from './logprobs.ts';

describe('convertGeminiLogprobs', () => {
  it('one OpenAI entry per decoding step, with the same step of the top candidates', () => {
    assert.deepEqual(
      convertGeminiLogprobs({
        chosenCandidates: [
          { token: 'Ja', logProbability: -0.5 },
          { token: '!', logProbability: -0.125 },
        ],
        topCandidates: [{ candidates: [{ token: 'Ja', logProbability: -0.5 }] }],
      }),
      [
        { token: 'Ja', logprob: -0.5, bytes: [74, 97], top_logprobs: [{ token: 'Ja', logprob: -0.5, bytes: [74, 97] }] },
        { token: '!', logprob: -0.125, bytes: [33], top_logprobs: [] },
      ],
    );
  });

  it('no chosen candidates is no log probabilities', () => {
    assert.equal(convertGeminiLogprobs({}), undefined);
    assert.equal(convertGeminiLogprobs({ chosenCandidates: [] }), undefined);
  });
});

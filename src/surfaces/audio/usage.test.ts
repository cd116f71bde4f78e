import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { speechEventUsage, transcriptEventUsage, transcriptionUsage } from './usage.ts';

const TOKENS = { type: 'tokens', input_tokens: 14, input_token_details: { text_tokens: 4, audio_tokens: 10 }, output_tokens: 11, total_tokens: 25 };

describe('audio usage', () => {
  it('tokens (gpt-4o-transcribe): the audio tokens among the input', () => {
    assert.deepEqual(transcriptionUsage({ text: 'hi', usage: TOKENS }), {
      inputTokens: 14,
      outputTokens: 11,
      audioInputTokens: 10,
      source: 'provider',
    });
  });

  it("duration (whisper-1): the seconds, from the usage or a verbose_json answer's duration", () => {
    assert.deepEqual(transcriptionUsage({ text: 'hi', usage: { type: 'duration', seconds: 9 } })?.units, { audioSeconds: 9 });
    assert.deepEqual(transcriptionUsage({ task: 'transcribe', duration: 8.47, text: 'hi' })?.units, { audioSeconds: 8.47 });
  });

  it('none from a text answer, nor from a duration that is no number of seconds', () => {
    assert.equal(transcriptionUsage(undefined), undefined);
    assert.equal(transcriptionUsage({ text: 'hi' }), undefined);
    assert.equal(transcriptionUsage({ text: 'hi', usage: { type: 'duration', seconds: '9' } }), undefined);
    assert.equal(transcriptionUsage({ text: 'hi', duration: -1 }), undefined);
  });

  it("a stream's usage is its done event's", () => {
    assert.equal(transcriptEventUsage('transcript.text.done', { text: 'hi', usage: TOKENS })?.outputTokens, 11);
    assert.equal(transcriptEventUsage('transcript.text.delta', { delta: 'hi' }), undefined);
    assert.deepEqual(speechEventUsage('speech.audio.done', { usage: { input_tokens: 9, output_tokens: 120, total_tokens: 129 } }), {
      inputTokens: 9,
      outputTokens: 120,
      source: 'provider',
    });
    assert.equal(speechEventUsage('speech.audio.delta', { audio: 'AAA=' }), undefined);
  });
});

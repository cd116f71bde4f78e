import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { refusalOf as refusal } from '../../../test/helpers/refusal.ts';
import { parseSpeech, parseTranscription } from './parse-request.ts';

const wav = new File(['RIFF'], 'a.wav', { type: 'audio/wav' });

describe('parseTranscription', () => {
  it('reads the model, the file, the prompt and stream; relays every field but the model', () => {
    const request = parseTranscription(
      { model: 'openai/whisper-1', file: wav, prompt: 'names: Ada', language: 'en', stream: 'true' },
      'transcriptions',
    );
    assert.deepEqual([request.model, request.prompt, request.stream], ['openai/whisper-1', 'names: Ada', true]);
    assert.deepEqual(Object.keys(request.form), ['file', 'prompt', 'language', 'stream']);
    assert.equal(parseTranscription({ model: 'm', file: wav }, 'translations').prompt, '');
  });

  it('answers 400 naming the field', () => {
    const cases: [Record<string, string | File>, 'transcriptions' | 'translations', string][] = [
      [{ file: wav }, 'transcriptions', 'model'],
      [{ model: 'm' }, 'transcriptions', 'file'],
      [{ model: 'm', file: 'text' }, 'transcriptions', 'file'],
      [{ model: 'm', file: wav, response_format: 'mp3' }, 'transcriptions', 'response_format'],
      [{ model: 'm', file: wav, response_format: 'diarized_json' }, 'translations', 'response_format'],
      [{ model: 'm', file: wav, stream: 'true' }, 'translations', 'stream'],
      [{ model: 'm', file: wav, stream: 'on' }, 'transcriptions', 'stream'],
    ];
    for (const [fields, kind, param] of cases) assert.equal(refusal(() => parseTranscription(fields, kind)).param, param);
  });
});

describe('parseSpeech', () => {
  it('reads the model, the input and whether it streams as SSE; relays the rest', () => {
    assert.deepEqual(parseSpeech({ model: 'openai/tts-1', input: 'Hi', voice: 'alloy', speed: 1.2 }), {
      model: 'openai/tts-1',
      input: 'Hi',
      sse: false,
      json: { input: 'Hi', voice: 'alloy', speed: 1.2 },
    });
    assert.equal(parseSpeech({ model: 'm', input: 'Hi', voice: { id: 'voice_123' }, stream_format: 'sse' }).sse, true);
  });

  it('answers 400 naming the field', () => {
    const cases: [unknown, string | null][] = [
      [{ input: 'Hi', voice: 'alloy' }, 'model'],
      [{ model: 'm', voice: 'alloy' }, 'input'],
      [{ model: 'm', input: 'x'.repeat(4097), voice: 'alloy' }, 'input'],
      [{ model: 'm', input: 'Hi' }, 'voice'],
      [{ model: 'm', input: 'Hi', voice: 'alloy', response_format: 'ogg' }, 'response_format'],
      [{ model: 'm', input: 'Hi', voice: 'alloy', stream_format: 'chunks' }, 'stream_format'],
      ['text', null],
    ];
    for (const [body, param] of cases) assert.equal(refusal(() => parseSpeech(body)).param, param, JSON.stringify(body).slice(0, 80));
  });
});

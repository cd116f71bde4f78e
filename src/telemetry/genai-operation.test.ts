import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { genAiOperation } from './genai-operation.ts';

describe('genAiOperation', () => {
  it('names chat and embeddings as the conventions do, images and audio generate_content', () => {
    assert.deepEqual(
      (['chat', 'responses', 'messages', 'embeddings', 'images', 'audio.transcriptions', 'audio.translations', 'audio.speech'] as const).map(
        genAiOperation,
      ),
      ['chat', 'chat', 'chat', 'embeddings', 'generate_content', 'generate_content', 'generate_content', 'generate_content'],
    );
  });
});

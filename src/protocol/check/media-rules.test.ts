import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { data, named, violations } from '../../../test/helpers/check-streams.ts';
import { checkStream } from './check-stream.ts';

const image = (type: string) => named(type, { type, b64_json: 'x' });
const transcript = (type: string) => data({ type, ...(type.endsWith('delta') ? { delta: 'hi' } : { text: 'hi' }) });
const error = data({ type: 'error', error: { message: 'broke', type: 'server_error' } });

describe('media rules', () => {
  it('conforming images, transcript and speech streams are told apart as media', () => {
    const images = [
      image('image_generation.partial_image'),
      image('image_generation.completed'),
      image('image_generation.partial_image'),
      image('image_generation.completed'),
    ];
    assert.deepEqual(violations(images), []);
    assert.equal(checkStream(images.join('')).kind, 'media');
    assert.deepEqual(violations([transcript('transcript.text.delta'), transcript('transcript.text.done')]), []);
    assert.deepEqual(violations([data({ type: 'speech.audio.delta', audio: 'AAA=' }), data({ type: 'speech.audio.done', usage: {} })]), []);
    assert.deepEqual(violations([image('image_edit.partial_image'), error]), []);
  });

  it('an event line that names another type, an event without one, events of two kinds', () => {
    assert.deepEqual(violations(named('image_generation.completed', { type: 'image_edit.completed' }), 'media'), ['1:media/event-type']);
    assert.deepEqual(violations([transcript('transcript.text.delta'), data({ text: 'hi' }), transcript('transcript.text.done')], 'media'), [
      '2:media/event-type',
    ]);
    assert.deepEqual(violations([image('image_generation.partial_image'), transcript('transcript.text.done')]), ['2:media/event-type']);
  });

  it('the stream ends with its final event or an error, and nothing follows the last', () => {
    assert.deepEqual(violations([image('image_generation.partial_image')]), ['end:media/terminal']);
    assert.deepEqual(violations([transcript('transcript.text.delta')]), ['end:media/terminal']);
    assert.deepEqual(violations([transcript('transcript.text.done'), transcript('transcript.text.delta')]), ['2:media/terminal']);
    assert.deepEqual(violations([transcript('transcript.text.delta'), error, transcript('transcript.text.done')]), ['3:media/terminal']);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { refusalOf as refusal } from '../../../test/helpers/refusal.ts';
import { parseImageEdit, parseImageGeneration } from './parse-request.ts';

const png = new File(['png'], 'a.png', { type: 'image/png' });

describe('parseImageGeneration', () => {
  it('reads what sluice needs and keeps the rest of the body, without the model, to relay', () => {
    const request = parseImageGeneration({
      model: 'openai/gpt-image-1',
      prompt: 'a fox',
      n: 2,
      stream: true,
      size: '1024x1024',
      background: 'transparent',
    });
    assert.deepEqual(request, {
      model: 'openai/gpt-image-1',
      prompt: 'a fox',
      n: 2,
      stream: true,
      body: { json: { prompt: 'a fox', n: 2, stream: true, size: '1024x1024', background: 'transparent' } },
    });
    assert.deepEqual(
      [parseImageGeneration({ model: 'm', prompt: 'p', n: null }).n, parseImageGeneration({ model: 'm', prompt: 'p' }).stream],
      [1, false],
    );
  });

  it('answers 400 naming the field', () => {
    const cases: [unknown, string | null][] = [
      [{ prompt: 'p' }, 'model'],
      [{ model: 'm' }, 'prompt'],
      [{ model: 'm', prompt: '' }, 'prompt'],
      [{ model: 'm', prompt: 'p', n: 0 }, 'n'],
      [{ model: 'm', prompt: 'p', n: 1.5 }, 'n'],
      [{ model: 'm', prompt: 'p', partial_images: 4 }, 'partial_images'],
      [{ model: 'm', prompt: 'p', stream: 'true' }, 'stream'],
      [[1], null],
    ];
    for (const [body, param] of cases) assert.equal(refusal(() => parseImageGeneration(body)).param, param, JSON.stringify(body));
  });
});

describe('parseImageEdit', () => {
  it('reads the form: its images (one or several), n and stream as text; relays every field but the model', () => {
    const request = parseImageEdit({
      model: 'up/gpt-image-1',
      prompt: 'a hat',
      'image[]': [png, png],
      mask: png,
      n: '3',
      stream: 'false',
      quality: 'low',
    });
    assert.deepEqual([request.model, request.prompt, request.n, request.stream], ['up/gpt-image-1', 'a hat', 3, false]);
    assert.ok('form' in request.body);
    assert.deepEqual(Object.keys(request.body.form), ['prompt', 'image[]', 'mask', 'n', 'stream', 'quality']);
  });

  it('answers 400 naming the field', () => {
    const cases: [Record<string, string | File | File[]>, string][] = [
      [{ prompt: 'p', image: png }, 'model'],
      [{ model: 'm', image: png }, 'prompt'],
      [{ model: 'm', prompt: 'p' }, 'image'],
      [{ model: 'm', prompt: 'p', image: 'not a file' }, 'image'],
      [{ model: 'm', prompt: 'p', image: png, mask: 'x' }, 'mask'],
      [{ model: 'm', prompt: 'p', image: png, n: '11' }, 'n'],
      [{ model: 'm', prompt: 'p', image: png, stream: '1' }, 'stream'],
    ];
    for (const [fields, param] of cases) assert.equal(refusal(() => parseImageEdit(fields)).param, param, JSON.stringify(Object.keys(fields)));
  });
});

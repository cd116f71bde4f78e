import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { refusalOf as refusal } from '../../test/helpers/refusal.ts';
import { FormFields } from './form-fields.ts';

const file = new File(['audio'], 'a.wav', { type: 'audio/wav' });

describe('FormFields', () => {
  const form = new FormFields({ model: 'm', n: '2', stream: 'true', bad: 'x', format: 'srt', file, 'image[]': [file, file], twice: ['a', 'b'] });

  it('reads text, whole numbers, booleans, choices and files as the API sends them', () => {
    assert.equal(form.text('model', true), 'm');
    assert.equal(form.text('absent'), undefined);
    assert.equal(form.integer('n', 1, 10), 2);
    assert.equal(form.boolean('stream'), true);
    assert.equal(form.oneOf('format', ['json', 'srt']), 'srt');
    assert.deepEqual(form.files(['image', 'image[]'], true), [file, file]);
    assert.deepEqual(form.files(['file'], true), [file]);
    assert.deepEqual(form.files(['mask'], false), []);
    assert.deepEqual(Object.keys(form.withoutModel()), ['n', 'stream', 'bad', 'format', 'file', 'image[]', 'twice']);
  });

  it('answers 400 naming the field', () => {
    const cases: [() => unknown, string][] = [
      [() => form.text('absent', true), 'absent'],
      [() => form.text('file'), 'file'],
      [() => form.text('twice'), 'twice'],
      [() => form.integer('n', 3, 10), 'n'],
      [() => form.integer('bad', 1, 10), 'bad'],
      [() => form.boolean('bad'), 'bad'],
      [() => form.oneOf('format', ['json']), 'format'],
      [() => form.files(['mask'], true), 'mask'],
      [() => form.files(['model'], true), 'model'],
      [() => new FormFields({ model: '' }).text('model', true), 'model'],
      [() => new FormFields({ n: '' }).integer('n', 0, 3), 'n'],
    ];
    for (const [read, param] of cases) {
      const err = refusal(read);
      assert.deepEqual([err.status, err.param], [400, param]);
    }
  });
});

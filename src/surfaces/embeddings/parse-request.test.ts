import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { parseEmbeddingsRequest } from './parse-request.ts';

function refusal(body: unknown): GatewayError {
  try {
    parseEmbeddingsRequest(body);
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return err;
  }
  assert.fail('expected a 400');
}

describe('parseEmbeddingsRequest', () => {
  it('takes each input form OpenAI documents, one entry per vector', () => {
    assert.deepEqual(parseEmbeddingsRequest({ model: 'm', input: 'a' }).request.input, ['a']);
    assert.deepEqual(parseEmbeddingsRequest({ model: 'm', input: ['a', 'b'] }).request.input, ['a', 'b']);
    assert.deepEqual(parseEmbeddingsRequest({ model: 'm', input: [1, 2] }).request.input, [[1, 2]]);
    assert.deepEqual(parseEmbeddingsRequest({ model: 'm', input: [[1], [2, 3]] }).request.input, [[1], [2, 3]]);
  });

  it('keeps the input as sent, the format (float by default), dimensions, user and unknown fields', () => {
    const { model, request } = parseEmbeddingsRequest({
      model: 'up/e',
      input: [7, 8],
      encoding_format: 'base64',
      dimensions: 64,
      user: 'u1',
      truncate_prompt_tokens: 10,
    });
    assert.equal(model, 'up/e');
    assert.deepEqual(request, {
      input: [[7, 8]],
      rawInput: [7, 8],
      encodingFormat: 'base64',
      dimensions: 64,
      user: 'u1',
      extra: { truncate_prompt_tokens: 10 },
    });
    assert.equal(parseEmbeddingsRequest({ model: 'm', input: 'a' }).request.encodingFormat, 'float');
  });

  it('answers 400 naming the field', () => {
    const cases: [unknown, string | null][] = [
      [{ input: 'a' }, 'model'],
      [{ model: 'm' }, 'input'],
      [{ model: 'm', input: 5 }, 'input'],
      [{ model: 'm', input: [] }, 'input'],
      [{ model: 'm', input: '' }, 'input'],
      [{ model: 'm', input: ['a', ''] }, 'input[1]'],
      [{ model: 'm', input: 'a', encoding_format: 'int8' }, 'encoding_format'],
      [{ model: 'm', input: 'a', dimensions: 0 }, 'dimensions'],
      [{ model: 'm', input: 'a', dimensions: 1.5 }, 'dimensions'],
      [{ model: 'm', input: 'a', user: 5 }, 'user'],
      [['not', 'an', 'object'], null],
    ];
    for (const [body, param] of cases) {
      const err = refusal(body);
      assert.equal(err.status, 400, JSON.stringify(body));
      assert.equal(err.param, param, JSON.stringify(body));
    }
    assert.equal(refusal({ model: 'm', input: Array(2049).fill('a') }).param, 'input');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { embeddingFixture } from '../../../test/helpers/embedding-fixtures.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { parseEmbeddingsRequest } from '../../surfaces/embeddings/parse-request.ts';
import { buildGeminiEmbeddings, decodeGeminiEmbeddings } from './embed.ts';

const target = { name: 'google', baseUrl: 'https://generativelanguage.googleapis.com', apiKey: 'AIza-k', dropParams: false };
const request = (body: Record<string, unknown>) => parseEmbeddingsRequest({ model: 'google/e', ...body }).request;

function refusal(call: () => unknown): GatewayError {
  try {
    call();
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return err;
  }
  assert.fail('expected a refusal');
}

describe('Gemini embeddings request', () => {
  it('one input: embedContent, dimensions as outputDimensionality, the key in a header', () => {
    const built = buildGeminiEmbeddings(request({ input: 'hello', dimensions: 64, user: 'u' }), 'gemini-embedding-001', target);
    assert.equal(built.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:embedContent');
    assert.equal(built.headers['x-goog-api-key'], 'AIza-k');
    assert.deepEqual(JSON.parse(built.body ?? ''), { content: { parts: [{ text: 'hello' }] }, outputDimensionality: 64 });
  });

  it('several inputs: batchEmbedContents, one request per input naming the model', () => {
    const built = buildGeminiEmbeddings(request({ input: ['a', 'b'] }), 'text-embedding-004', target);
    assert.equal(built.url, 'https://generativelanguage.googleapis.com/v1beta/models/text-embedding-004:batchEmbedContents');
    assert.deepEqual(JSON.parse(built.body ?? ''), {
      requests: [
        { model: 'models/text-embedding-004', content: { parts: [{ text: 'a' }] } },
        { model: 'models/text-embedding-004', content: { parts: [{ text: 'b' }] } },
      ],
    });
  });

  it('refuses token ids naming input, and an unknown parameter unless drop_params', () => {
    assert.equal(refusal(() => buildGeminiEmbeddings(request({ input: [1, 2] }), 'e', target)).param, 'input');
    assert.equal(refusal(() => buildGeminiEmbeddings(request({ input: [[1], [2]] }), 'e', target)).param, 'input[0]');
    assert.equal(refusal(() => buildGeminiEmbeddings(request({ input: 'a', task: 'x' }), 'e', target)).param, 'task');
    const dropped = buildGeminiEmbeddings(request({ input: 'a', task: 'x' }), 'e', { ...target, dropParams: true });
    assert.deepEqual(JSON.parse(dropped.body ?? ''), { content: { parts: [{ text: 'a' }] } });
  });
});

describe('Gemini embeddings response', () => {
  it('batchEmbedContents (vercel/ai test body): the vectors in request order, no token count', () => {
    assert.deepEqual(decodeGeminiEmbeddings('google', embeddingFixture('gemini/batch-two.json'), 2), {
      embeddings: [
        [0.1, 0.2, 0.3, 0.4, 0.5],
        [0.6, 0.7, 0.8, 0.9, 1.0],
      ],
    });
  });

  it('embedContent (gemini_ex documentation example): one vector', () => {
    assert.deepEqual(decodeGeminiEmbeddings('google', embeddingFixture('gemini/single.json'), 1), { embeddings: [[0.1, 0.2, 0.3]] });
  });

  it('answers 502 when the count or the values are wrong', () => {
    assert.equal(refusal(() => decodeGeminiEmbeddings('google', embeddingFixture('gemini/batch-two.json'), 3)).status, 502);
    assert.equal(refusal(() => decodeGeminiEmbeddings('google', { embedding: { values: 'x' } }, 1)).status, 502);
  });
});

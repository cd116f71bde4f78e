import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { embeddingFixture } from '../../../test/helpers/embedding-fixtures.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { parseEmbeddingsRequest } from '../../surfaces/embeddings/parse-request.ts';
import { buildOpenAICompatibleEmbeddings, decodeOpenAICompatibleEmbeddings } from './embed.ts';

const target = { baseUrl: 'https://api.example.com/v1/', apiKey: 'sk-up', headers: { 'x-extra': '1' }, streamOptions: true };
const request = (body: Record<string, unknown>) => parseEmbeddingsRequest({ model: 'up/e', ...body }).request;

describe('OpenAI-compatible embeddings request', () => {
  it('posts the client body as sent to {base}/embeddings under the upstream model', () => {
    const built = buildOpenAICompatibleEmbeddings(
      request({ input: [[1, 2]], encoding_format: 'base64', dimensions: 64, user: 'u', truncate_prompt_tokens: 5 }),
      'text-embedding-3-large',
      target,
    );
    assert.equal(built.url, 'https://api.example.com/v1/embeddings');
    assert.equal(built.headers.authorization, 'Bearer sk-up');
    assert.equal(built.headers['x-extra'], '1');
    assert.deepEqual(JSON.parse(built.body ?? ''), {
      truncate_prompt_tokens: 5,
      model: 'text-embedding-3-large',
      input: [[1, 2]],
      encoding_format: 'base64',
      dimensions: 64,
      user: 'u',
    });
  });

  it('sends a single string as a string, and no encoding_format for floats (the default)', () => {
    const built = buildOpenAICompatibleEmbeddings(request({ input: 'hi' }), 'e', target);
    assert.deepEqual(JSON.parse(built.body ?? ''), { model: 'e', input: 'hi' });
  });
});

describe('OpenAI-compatible embeddings response (vercel/ai test body)', () => {
  const body = embeddingFixture('openai/text-embedding-3-large-two.json');

  it('gives the vectors in input order and the prompt tokens', () => {
    assert.deepEqual(decodeOpenAICompatibleEmbeddings('up', body, 2), {
      embeddings: [
        [0.1, 0.2, 0.3, 0.4, 0.5],
        [0.6, 0.7, 0.8, 0.9, 1.0],
      ],
      inputTokens: 8,
    });
  });

  it('puts data back in order by index, keeps base64 strings, and reads no usage as unknown', () => {
    const shuffled = {
      data: [
        { index: 1, embedding: 'AACAPw==' },
        { index: 0, embedding: [1] },
      ],
    };
    assert.deepEqual(decodeOpenAICompatibleEmbeddings('up', shuffled, 2), { embeddings: [[1], 'AACAPw=='] });
  });

  it('answers 502 for a body that does not match the inputs', () => {
    for (const bad of [
      {},
      { data: [{ index: 0, embedding: [1] }] },
      {
        data: [
          { index: 0, embedding: ['x'] },
          { index: 1, embedding: [1] },
        ],
      },
      {
        data: [
          { index: 0, embedding: [1] },
          { index: 0, embedding: [1] },
        ],
      },
    ]) {
      assert.throws(
        () => decodeOpenAICompatibleEmbeddings('up', bad, 2),
        (err) => err instanceof GatewayError && err.status === 502,
        JSON.stringify(bad),
      );
    }
  });
});

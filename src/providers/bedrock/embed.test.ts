import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { embeddingFixture } from '../../../test/helpers/embedding-fixtures.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { parseEmbeddingsRequest } from '../../surfaces/embeddings/parse-request.ts';
import { buildBedrockEmbeddings, decodeBedrockEmbeddings, embedFamily } from './embed.ts';

const target = { endpoint: 'https://bedrock-runtime.us-east-1.amazonaws.com', dropParams: false };
const request = (body: Record<string, unknown>) => parseEmbeddingsRequest({ model: 'bedrock/e', ...body }).request;
const bodies = (model: string, body: Record<string, unknown>, t = target) =>
  buildBedrockEmbeddings(request(body), model, t).map((call) => ({ url: call.url, body: JSON.parse(call.body ?? '') }));

function refusal(call: () => unknown): GatewayError {
  try {
    call();
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return err;
  }
  assert.fail('expected a refusal');
}

describe('Bedrock embeddings request', () => {
  it('finds the family inside profiles and ARNs', () => {
    assert.equal(embedFamily('amazon.titan-embed-text-v2:0'), 'titan-v2');
    assert.equal(embedFamily('amazon.titan-embed-text-v1'), 'titan-v1');
    assert.equal(embedFamily('us.cohere.embed-v4:0'), 'cohere-v4');
    assert.equal(embedFamily('cohere.embed-multilingual-v3'), 'cohere');
    assert.equal(embedFamily('amazon.nova-2-multimodal-embeddings-v1:0'), 'nova');
    assert.equal(embedFamily('us.amazon.nova-2-multimodal-embeddings-v1:0'), 'nova');
    assert.equal(embedFamily('anthropic.claude-3-haiku-20240307-v1:0'), undefined);
  });

  it('Nova Multimodal Embeddings: one SINGLE_EMBEDDING call per text, dimensions as embeddingDimension', () => {
    const nova = (text: string, extra: Record<string, unknown> = {}) => ({
      schemaVersion: 'nova-multimodal-embed-v1',
      taskType: 'SINGLE_EMBEDDING',
      singleEmbeddingParams: { embeddingPurpose: 'GENERIC_INDEX', ...extra, text: { truncationMode: 'NONE', value: text } },
    });
    assert.deepEqual(bodies('amazon.nova-2-multimodal-embeddings-v1:0', { input: ['a', 'b'], dimensions: 1024 }), [
      {
        url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-2-multimodal-embeddings-v1%3A0/invoke',
        body: nova('a', { embeddingDimension: 1024 }),
      },
      {
        url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-2-multimodal-embeddings-v1%3A0/invoke',
        body: nova('b', { embeddingDimension: 1024 }),
      },
    ]);
    assert.deepEqual(bodies('amazon.nova-2-multimodal-embeddings-v1:0', { input: 'a' })[0].body, nova('a'));
    assert.equal(refusal(() => bodies('amazon.nova-2-multimodal-embeddings-v1:0', { input: 'a', dimensions: 512 })).param, 'dimensions');
    const dropped = bodies('amazon.nova-2-multimodal-embeddings-v1:0', { input: 'a', dimensions: 512 }, { ...target, dropParams: true });
    assert.deepEqual(dropped[0].body, nova('a'));
  });

  it("Nova Multimodal Embeddings: reads each answer's embeddings[0].embedding, the tokens from the header", () => {
    const answer = (embedding: number[]) => ({
      json: { embeddings: [{ embeddingType: 'TEXT', embedding }] },
      headers: { 'x-amzn-bedrock-input-token-count': '3' },
    });
    assert.deepEqual(decodeBedrockEmbeddings('amazon.nova-2-multimodal-embeddings-v1:0', [answer([0.5, -1]), answer([0.25, 2])], 2), {
      embeddings: [
        [0.5, -1],
        [0.25, 2],
      ],
      inputTokens: 6,
    });
  });

  it('Titan v2: one InvokeModel call per input, dimensions passed', () => {
    assert.deepEqual(bodies('amazon.titan-embed-text-v2:0', { input: ['a', 'b'], dimensions: 256 }), [
      {
        url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.titan-embed-text-v2%3A0/invoke',
        body: { inputText: 'a', dimensions: 256 },
      },
      {
        url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.titan-embed-text-v2%3A0/invoke',
        body: { inputText: 'b', dimensions: 256 },
      },
    ]);
  });

  it('Cohere: every text in one call, input_type search_document unless the client set it, output_dimension on v4', () => {
    assert.deepEqual(bodies('cohere.embed-english-v3', { input: ['a', 'b'] }), [
      {
        url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/cohere.embed-english-v3/invoke',
        body: { texts: ['a', 'b'], input_type: 'search_document' },
      },
    ]);
    assert.deepEqual(bodies('cohere.embed-v4:0', { input: 'q', input_type: 'search_query', dimensions: 512 })[0].body, {
      texts: ['q'],
      input_type: 'search_query',
      output_dimension: 512,
    });
  });

  it('refuses what the model cannot honour, naming it, unless drop_params', () => {
    assert.equal(refusal(() => bodies('amazon.titan-embed-text-v1', { input: 'a', dimensions: 256 })).param, 'dimensions');
    assert.equal(refusal(() => bodies('cohere.embed-english-v3', { input: 'a', dimensions: 256 })).param, 'dimensions');
    assert.equal(refusal(() => bodies('amazon.titan-embed-text-v2:0', { input: 'a', input_type: 'x' })).param, 'input_type');
    assert.equal(refusal(() => bodies('amazon.titan-embed-text-v2:0', { input: [3, 4] })).param, 'input');
    const notEmbedding = refusal(() => bodies('anthropic.claude-3-haiku-20240307-v1:0', { input: 'a' }));
    assert.equal(notEmbedding.param, 'model');
    assert.match(notEmbedding.message, /Titan text .*, Cohere .* and Nova Multimodal Embeddings/);
    assert.deepEqual(bodies('amazon.titan-embed-text-v1', { input: 'a', dimensions: 256 }, { ...target, dropParams: true })[0].body, {
      inputText: 'a',
    });
  });
});

describe('Bedrock embeddings response (vercel/ai test bodies)', () => {
  const vector = [-0.09, 0.05, -0.02, 0.01, 0.04];

  it('Titan: the vector of each call and the sum of inputTextTokenCount', () => {
    const titan = embeddingFixture('bedrock/titan-v2.json');
    assert.deepEqual(
      decodeBedrockEmbeddings(
        'amazon.titan-embed-text-v2:0',
        [
          { json: titan, headers: {} },
          { json: titan, headers: {} },
        ],
        2,
      ),
      {
        embeddings: [vector, vector],
        inputTokens: 16,
      },
    );
  });

  it('Cohere v3 and v4: the vectors, the token count from the InvokeModel header', () => {
    const headers = { 'x-amzn-bedrock-input-token-count': '6' };
    assert.deepEqual(decodeBedrockEmbeddings('cohere.embed-english-v3', [{ json: embeddingFixture('bedrock/cohere-v3.json'), headers }], 1), {
      embeddings: [vector],
      inputTokens: 6,
    });
    assert.deepEqual(decodeBedrockEmbeddings('cohere.embed-v4:0', [{ json: embeddingFixture('bedrock/cohere-v4.json'), headers: {} }], 1), {
      embeddings: [vector],
    });
  });

  it('answers 502 when the vectors do not match the inputs', () => {
    assert.equal(
      refusal(() => decodeBedrockEmbeddings('cohere.embed-v4:0', [{ json: embeddingFixture('bedrock/cohere-v4.json'), headers: {} }], 2)).status,
      502,
    );
    assert.equal(refusal(() => decodeBedrockEmbeddings('cohere.embed-v4:0', [{ json: { id: 'x' }, headers: {} }], 1)).status, 502);
  });
});

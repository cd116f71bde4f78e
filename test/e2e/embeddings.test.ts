import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { PricingRegistry } from '../../src/accounting/pricing.ts';
import { adminCall, projectWithKey } from '../helpers/admin-client.ts';
import { embeddingFixture } from '../helpers/embedding-fixtures.ts';
import type { RecordedRequest } from '../helpers/fake-upstream.ts';
import { requestRecord, upstreamConfig, useUpstreamGateway } from '../helpers/gateway.ts';
import { speakAsTestCallers } from './limits-support.ts';

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/** One fake upstream plays every provider, told apart by path. */
function replyByPath(req: RecordedRequest) {
  if (req.url === '/v1/embeddings') {
    // A server that ignores encoding_format and always answers floats (sluice encodes for the client).
    return json(embeddingFixture('openai/text-embedding-3-large-two.json'));
  }
  if (req.url.endsWith(':batchEmbedContents')) return json(embeddingFixture('gemini/batch-two.json'));
  if (req.url.endsWith(':embedContent')) return json(embeddingFixture('gemini/single.json'));
  if (req.url.includes('titan-embed-text-v2')) return json(embeddingFixture('bedrock/titan-v2.json'));
  if (req.url.includes('cohere.embed-english-v3')) {
    return json(embeddingFixture('bedrock/cohere-v3.json'), { 'x-amzn-bedrock-input-token-count': '6' });
  }
  return { status: 404, ...json({ error: { message: `no route ${req.url}` } }) };
}

function last(upstream: { requests: RecordedRequest[] }): RecordedRequest {
  const request = upstream.requests.at(-1);
  assert.ok(request, 'the upstream got no request');
  return request;
}

const TWO = [
  [0.1, 0.2, 0.3, 0.4, 0.5],
  [0.6, 0.7, 0.8, 0.9, 1.0],
];
const TITAN = [-0.09, 0.05, -0.02, 0.01, 0.04];
/** What a float32 round trip (base64) makes of a vector. */
const f32 = (v: number[]) => v.map((x) => Math.fround(x));

describe('POST /v1/embeddings through the openai SDK', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: {
      ...upstreamConfig(url),
      // An embeddings route: its first target is down, Gemini answers.
      routes: { vectors: { targets: [{ model: 'up/text-embedding-3-large' }, { model: 'google/gemini-embedding-001' }] } },
    },
    env: {
      GEMINI_API_KEY: 'AIza-e2e',
      GEMINI_BASE_URL: url,
      AWS_BEARER_TOKEN_BEDROCK: 'bedrock-key',
      AWS_ENDPOINT_URL_BEDROCK_RUNTIME: url,
    },
  }));

  async function embed(params: OpenAI.EmbeddingCreateParams) {
    const { data, response } = await gw.client.embeddings.create(params).withResponse();
    return { body: data, record: await requestRecord(gw, response.headers.get('x-request-id') ?? '') };
  }

  it('OpenAI-compatible: floats relayed, the body passed on as sent, prompt tokens in the ledger', async () => {
    upstream.reply(replyByPath);
    const { body, record } = await embed({ model: 'up/text-embedding-3-large', input: ['a', 'b'], encoding_format: 'float', dimensions: 5 });
    assert.deepEqual(last(upstream).json, { model: 'text-embedding-3-large', input: ['a', 'b'], dimensions: 5 });
    assert.equal(last(upstream).headers.authorization, 'Bearer sk-upstream');
    assert.deepEqual(body, {
      object: 'list',
      data: TWO.map((embedding, index) => ({ object: 'embedding', index, embedding })),
      model: 'up/text-embedding-3-large',
      usage: { prompt_tokens: 8, total_tokens: 8 },
    });
    assert.equal(record.surface, 'embeddings');
    assert.equal(record.streamed, false);
    assert.equal(record.outcome, 'ok');
    assert.equal(record.provider, 'up');
    assert.deepEqual([record.usage.input_tokens, record.usage.output_tokens, record.usage.estimated], [8, 0, false]);
  });

  it('base64 (the SDK default, decoded by the SDK): sluice encodes the floats the upstream sent', async () => {
    upstream.reply(replyByPath);
    const { body } = await embed({ model: 'up/text-embedding-3-large', input: ['a', 'b'] });
    assert.equal((last(upstream).json as { encoding_format?: string }).encoding_format, 'base64');
    assert.deepEqual(
      body.data.map((d) => d.embedding),
      TWO.map(f32),
    );
  });

  it('base64 on the wire: little-endian float32, as OpenAI sends it', async () => {
    upstream.reply(replyByPath);
    const res = await fetch(`${gw.url}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'google/gemini-embedding-001', input: 'hello', encoding_format: 'base64' }),
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { data: { embedding: string }[] };
    const bytes = Buffer.from(body.data[0].embedding, 'base64');
    assert.deepEqual(
      Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4)),
      f32([0.1, 0.2, 0.3]),
    );
  });

  it('Gemini: batchEmbedContents with outputDimensionality; no token count from Gemini, so sluice counts and prices it', async () => {
    upstream.reply(replyByPath);
    const { body, record } = await embed({
      model: 'google/gemini-embedding-001',
      input: ['sunny day at the beach', 'rainy day in the city'],
      dimensions: 5,
      encoding_format: 'float',
    });
    assert.equal(last(upstream).url, '/v1beta/models/gemini-embedding-001:batchEmbedContents');
    assert.equal(last(upstream).headers['x-goog-api-key'], 'AIza-e2e');
    assert.deepEqual(last(upstream).json, {
      requests: ['sunny day at the beach', 'rainy day in the city'].map((text) => ({
        model: 'models/gemini-embedding-001',
        content: { parts: [{ text }] },
        outputDimensionality: 5,
      })),
    });
    assert.deepEqual(
      body.data.map((d) => d.embedding),
      TWO,
    );
    assert.equal(record.usage.estimated, true);
    assert.ok(record.usage.input_tokens > 0);
    assert.equal(body.usage.prompt_tokens, record.usage.input_tokens);
    assert.equal(record.price_known, true);
    assert.ok(record.cost_usd > 0);
  });

  it('Bedrock Titan v2: one InvokeModel call per input, dimensions passed, tokens summed and priced', async () => {
    upstream.reply(replyByPath);
    const before = upstream.requests.length;
    const { body, record } = await embed({
      model: 'bedrock/amazon.titan-embed-text-v2:0',
      input: ['a', 'b'],
      dimensions: 256,
      encoding_format: 'float',
    });
    const calls = upstream.requests.slice(before);
    assert.deepEqual(
      calls.map((c) => [c.url, c.json]),
      [
        ['/model/amazon.titan-embed-text-v2%3A0/invoke', { inputText: 'a', dimensions: 256 }],
        ['/model/amazon.titan-embed-text-v2%3A0/invoke', { inputText: 'b', dimensions: 256 }],
      ],
    );
    assert.equal(calls[0].headers.authorization, 'Bearer bedrock-key');
    assert.deepEqual(
      body.data.map((d) => d.embedding),
      [TITAN, TITAN],
    );
    assert.deepEqual(body.usage, { prompt_tokens: 16, total_tokens: 16 });
    assert.equal(record.usage.input_tokens, 16);
    const expected = new PricingRegistry().cost('bedrock', 'amazon.titan-embed-text-v2:0', {
      inputTokens: 16,
      outputTokens: 0,
      source: 'provider',
    });
    assert.equal(expected.priceKnown, true);
    assert.equal(record.cost_usd, expected.costUsd);
  });

  it('Bedrock Cohere: the texts in one call, the token count from the InvokeModel header', async () => {
    upstream.reply(replyByPath);
    const { body, record } = await embed({ model: 'bedrock/cohere.embed-english-v3', input: 'sunny day', encoding_format: 'float' });
    assert.deepEqual(last(upstream).json, { texts: ['sunny day'], input_type: 'search_document' });
    assert.deepEqual(body.data[0].embedding, TITAN);
    assert.equal(record.usage.input_tokens, 6);
  });

  it('a route falls back to its next target when the first is unavailable, and the row says so', async () => {
    upstream.reply((req) =>
      req.url === '/v1/embeddings' ? { status: 503, ...json({ error: { message: 'overloaded', type: 'server_error' } }) } : replyByPath(req),
    );
    const { body, record } = await embed({ model: 'vectors', input: 'hello', encoding_format: 'float' });
    assert.deepEqual(body.data[0].embedding, [0.1, 0.2, 0.3]);
    assert.equal(last(upstream).url, '/v1beta/models/gemini-embedding-001:embedContent');
    assert.equal(`${record.provider}/${record.model}`, 'google/gemini-embedding-001');
    assert.deepEqual(
      record.attempts.map((a: { provider: string }) => a.provider),
      ['up', 'google'],
    );
  });

  it('answers 400 naming what cannot be honoured, with a ledger row', async () => {
    upstream.reply(replyByPath);
    const cases: [OpenAI.EmbeddingCreateParams, string, RegExp][] = [
      [{ model: 'mock/echo', input: 'a' }, 'model', /mock\/echo does not offer embeddings/],
      [{ model: 'bedrock/cohere.embed-english-v3', input: 'a', dimensions: 64 }, 'dimensions', /dimensions/],
      [{ model: 'google/gemini-embedding-001', input: [1, 2, 3] }, 'input', /text only/],
    ];
    for (const [params, param, message] of cases) {
      let failed = '';
      const before = upstream.requests.length;
      await assert.rejects(gw.client.embeddings.create(params), (err: unknown) => {
        assert.ok(err instanceof OpenAI.BadRequestError, String(err));
        assert.equal((err.error as { param?: string }).param, param);
        assert.match(err.message, message);
        failed = err.headers.get('x-request-id') ?? '';
        return true;
      });
      assert.equal(upstream.requests.length, before, 'nothing reached the upstream');
      const record = await requestRecord(gw, failed);
      assert.deepEqual([record.surface, record.outcome, record.error?.code], ['embeddings', 'error', 'invalid_request']);
    }
  });
});

describe("POST /v1/embeddings under a project's endpoint", () => {
  const MASTER = 'sk-master-embeddings';
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: { ...upstreamConfig(url), auth: { master_key: MASTER }, ledger: { flush_interval_ms: 10 } },
  }));

  it("a bare model name means the endpoint's model; the row is the project's", async () => {
    upstream.reply(replyByPath);
    const key = await projectWithKey(gw.url, MASTER, 'proj_emb');
    const created = await adminCall(gw.url, MASTER, 'POST', '/admin/endpoints', {
      project: 'proj_emb',
      name: 'vectors',
      model: 'up/text-embedding-3-large',
    });
    assert.equal(created.status, 201, created.text);
    const client = new OpenAI({ baseURL: `${gw.url}/proj_emb/vectors/v1`, apiKey: key.key, maxRetries: 0 });
    const { data, response } = await client.embeddings.create({ model: 'my-embedder', input: ['a', 'b'], encoding_format: 'float' }).withResponse();
    assert.equal((last(upstream).json as { model?: string }).model, 'text-embedding-3-large');
    assert.deepEqual(
      data.data.map((d) => d.embedding),
      TWO,
    );
    const row = (await adminCall(gw.url, MASTER, 'GET', `/v1/requests/${response.headers.get('x-request-id')}`)).body;
    assert.deepEqual([row.project_id, row.surface, row.usage.input_tokens], ['proj_emb', 'embeddings', 8]);
  });
});

describe('regression: embeddings are over-counted when the provider reports no count', () => {
  // $1,000 a million tokens: a token of input is $0.001.
  const PRICED = {
    'google/gemini-embedding-001': { input_mtok: 1000, output_mtok: 0 },
    'up/text-embedding-3-small': { input_mtok: 1000, output_mtok: 0 },
  };
  const LANGUAGES = ['Ruby', 'Python', 'JavaScript'];
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: { ...upstreamConfig(url), pricing: PRICED },
    env: { GEMINI_API_KEY: 'AIza-e2e', GEMINI_BASE_URL: url },
  }));

  /** Neither answer reports a token count: Gemini's batch never does, and this OpenAI-compatible server leaves `usage` out. */
  function vectorsWithoutCounts(req: RecordedRequest) {
    const vector = [0.1, 0.2, 0.3];
    if (req.url.endsWith(':batchEmbedContents')) return json({ embeddings: LANGUAGES.map(() => ({ values: vector })) });
    return json({ object: 'list', data: LANGUAGES.map((_, index) => ({ object: 'embedding', index, embedding: vector })), model: 'm' });
  }

  it('each input is counted alone, without chat framing, flagged as an estimate, and priced so', async () => {
    upstream.reply(vectorsWithoutCounts);
    // sluice's BPE for OpenAI's embedding models is theirs (cl100k): OpenAI reports 3 for these inputs.
    // For Gemini it is o200k, which splits JavaScript in two. As one chat message they counted 12.
    for (const [model, tokens] of [
      ['up/text-embedding-3-small', 3],
      ['google/gemini-embedding-001', 4],
    ] as const) {
      const { data, response } = await gw.client.embeddings.create({ model, input: LANGUAGES, encoding_format: 'float' }).withResponse();
      const record = await requestRecord(gw, response.headers.get('x-request-id') ?? '');
      assert.deepEqual([record.usage.input_tokens, record.usage.output_tokens, record.usage.estimated], [tokens, 0, true], model);
      assert.equal(data.usage.prompt_tokens, tokens);
      assert.equal(record.cost_usd, tokens * 0.001);
    }
  });

  it("the budget reserves the same per-input estimate: a budget the chat framing's estimate overran admits the request", async () => {
    upstream.reply(vectorsWithoutCounts);
    // The estimate is one token per 4 bytes of each input: 1 + 2 + 3 = $0.006 (as a chat message: 12 tokens, $0.012).
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 0.008 }]);
    const ask = () =>
      fetch(`${gw.url}/v1/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-test-key': 'embedder' },
        body: JSON.stringify({ model: 'google/gemini-embedding-001', input: LANGUAGES }),
      });
    const first = await ask();
    assert.equal(first.status, 200, await first.clone().text());
    // It cost $0.004 (4 tokens counted): $0.004 is left, less than the next one's estimated $0.006.
    const second = await ask();
    assert.equal(second.status, 429);
    assert.equal(((await second.json()) as { error: { code: string } }).error.code, 'insufficient_quota');
  });
});

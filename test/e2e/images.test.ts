import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { PricingRegistry } from '../../src/accounting/pricing.ts';
import { type RecordedRequest, recordedForm, type UpstreamReply } from '../helpers/fake-upstream.ts';
import { requestRecord, useUpstreamGateway } from '../helpers/gateway.ts';
import { speakAsTestCallers } from './limits-support.ts';

// The wire shapes of OpenAI's Images API reference (POST /v1/images/generations, /v1/images/edits):
// an ImagesResponse, and with `stream: true` the image_generation.partial_image and .completed events.
const PNG = Buffer.from('a tiny png').toString('base64');
const GPT_IMAGE_USAGE = {
  total_tokens: 4210,
  input_tokens: 50,
  output_tokens: 4160,
  input_tokens_details: { text_tokens: 40, image_tokens: 10 },
};

const json = (body: unknown, status = 200): UpstreamReply => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

function imagesAnswer(req: RecordedRequest): UpstreamReply {
  const { n } = (req.json ?? {}) as { n?: number };
  const data = Array.from({ length: n ?? 1 }, () => ({ b64_json: PNG }));
  // A dall-e model reports no usage: it is priced per image. (An edit's model is in its multipart body.)
  const gptImage = req.body.includes('gpt-image');
  return json({ created: 1_764_000_000, data, ...(gptImage ? { usage: GPT_IMAGE_USAGE } : {}) });
}

const event = (type: string, body: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`;
const STREAMED = [
  event('image_generation.partial_image', {
    b64_json: PNG,
    partial_image_index: 0,
    created_at: 1,
    size: '1024x1024',
    quality: 'low',
    background: 'opaque',
    output_format: 'png',
  }),
  event('image_generation.completed', {
    b64_json: PNG,
    created_at: 2,
    size: '1024x1024',
    quality: 'low',
    background: 'opaque',
    output_format: 'png',
    usage: GPT_IMAGE_USAGE,
  }),
].join('');

function last(upstream: { requests: RecordedRequest[] }): RecordedRequest {
  const request = upstream.requests.at(-1);
  assert.ok(request, 'the upstream got no request');
  return request;
}

const gptImageCost = () =>
  new PricingRegistry().cost('openai', 'gpt-image-1', {
    inputTokens: 50,
    outputTokens: 4160,
    imageInputTokens: 10,
    source: 'provider',
  });

describe('POST /v1/images through the openai SDK', () => {
  // The openai preset points at the fake upstream (its models are in the pricing registry); `down` is another server.
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: {
      // The registry has no price for dall-e-3 (priced per image by size and quality): the config sets one.
      pricing: { 'openai/dall-e-3': { per_image: 0.04 } },
      routes: { painter: { targets: [{ model: 'down/gpt-image-1' }, { model: 'openai/gpt-image-1' }] } },
      providers: { down: { base_url: `${url}/down/v1`, api_key: 'sk-down' } },
    },
    env: { OPENAI_API_KEY: 'sk-upstream', OPENAI_BASE_URL: `${url}/v1` },
  }));

  async function record(response: Response) {
    return requestRecord(gw, response.headers.get('x-request-id') ?? '');
  }

  it('generations: the body relayed under the upstream model name, the answer as it came, tokens and cost in the ledger', async () => {
    upstream.reply(imagesAnswer);
    const { data, response } = await gw.client.images
      .generate({ model: 'openai/gpt-image-1', prompt: 'a lighthouse at dusk', size: '1024x1024', quality: 'low' })
      .withResponse();
    assert.equal(last(upstream).url, '/v1/images/generations');
    assert.equal(last(upstream).headers.authorization, 'Bearer sk-upstream');
    assert.deepEqual(last(upstream).json, { model: 'gpt-image-1', prompt: 'a lighthouse at dusk', size: '1024x1024', quality: 'low' });
    assert.equal(data.data?.[0].b64_json, PNG);
    assert.deepEqual(data.usage, GPT_IMAGE_USAGE);
    const row = await record(response);
    assert.deepEqual([row.surface, row.streamed, row.outcome, row.provider, row.model], ['images', false, 'ok', 'openai', 'gpt-image-1']);
    assert.deepEqual([row.usage.input_tokens, row.usage.output_tokens, row.usage.estimated], [50, 4160, false]);
    // The image tokens of the input at their own price: 40 text tokens at $5/M, 10 image tokens at $10/M, 4160 output at $40/M.
    const expected = gptImageCost();
    assert.equal(expected.priceKnown, true);
    assert.equal(expected.costUsd, (40 * 5 + 10 * 10 + 4160 * 40) / 1_000_000);
    assert.deepEqual([row.price_known, row.cost_usd], [true, expected.costUsd]);
    assert.ok(row.ttft_ms !== null);
  });

  it('a dall-e model priced per image in the config: n images at that price', async () => {
    upstream.reply(imagesAnswer);
    const { data, response } = await gw.client.images.generate({ model: 'openai/dall-e-3', prompt: 'two moons', n: 2 }).withResponse();
    assert.equal(data.data?.length, 2);
    const row = await record(response);
    assert.deepEqual([row.price_known, row.cost_usd, row.usage.estimated], [true, 0.08, false]);
  });

  it('stream: partial images and the final one relayed as SSE events, the usage of the final one in the ledger', async () => {
    upstream.reply({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: STREAMED, randomSplit: { seed: 7 } });
    const { data: stream, response } = await gw.client.images
      .generate({ model: 'openai/gpt-image-1', prompt: 'a fox', stream: true, partial_images: 1 })
      .withResponse();
    const types: string[] = [];
    for await (const e of stream) types.push(e.type);
    assert.deepEqual(types, ['image_generation.partial_image', 'image_generation.completed']);
    assert.equal((last(upstream).json as { stream?: boolean }).stream, true);
    assert.equal(last(upstream).headers.accept, 'text/event-stream');
    const row = await record(response);
    assert.deepEqual([row.surface, row.streamed, row.outcome], ['images', true, 'ok']);
    assert.deepEqual([row.usage.input_tokens, row.usage.output_tokens], [50, 4160]);
    assert.equal(row.cost_usd, gptImageCost().costUsd);
  });

  it("a stream the upstream breaks ends with an error event the SDK raises, and the row's failure", async () => {
    const partial = STREAMED.slice(0, STREAMED.indexOf('event: image_generation.completed'));
    upstream.reply({ status: 200, headers: { 'content-type': 'text/event-stream' }, pieces: [partial], after: 'reset' });
    const { data: stream, response } = await gw.client.images
      .generate({ model: 'openai/gpt-image-1', prompt: 'a fox', stream: true, partial_images: 1 })
      .withResponse();
    const types: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const e of stream) types.push(e.type);
      })(),
      (err: unknown) => err instanceof OpenAI.APIError,
    );
    assert.deepEqual(types, ['image_generation.partial_image']);
    const row = await record(response);
    assert.deepEqual([row.surface, row.outcome, row.error.code], ['images', 'error', 'upstream_connection_error']);
  });

  it('edits: the multipart upload relayed with its files, under the upstream model name', async () => {
    upstream.reply(imagesAnswer);
    const image = await toFile(Buffer.from('PNG-BYTES-OF-A-CAT'), 'cat.png', { type: 'image/png' });
    const mask = await toFile(Buffer.from('PNG-BYTES-OF-A-MASK'), 'mask.png', { type: 'image/png' });
    const { data, response } = await gw.client.images
      .edit({ model: 'openai/gpt-image-1', prompt: 'give it a hat', image, mask, n: 1 })
      .withResponse();
    assert.equal(data.data?.[0].b64_json, PNG);
    const sent = last(upstream);
    assert.equal(sent.url, '/v1/images/edits');
    assert.match(String(sent.headers['content-type']), /^multipart\/form-data; boundary=/);
    const form = await recordedForm(sent);
    assert.equal(form.get('model'), 'gpt-image-1');
    assert.equal(form.get('prompt'), 'give it a hat');
    assert.equal(form.get('n'), '1');
    const file = form.get('image') as File;
    assert.deepEqual([file.name, file.type, await file.text()], ['cat.png', 'image/png', 'PNG-BYTES-OF-A-CAT']);
    assert.equal(await (form.get('mask') as File).text(), 'PNG-BYTES-OF-A-MASK');
    const row = await record(response);
    assert.deepEqual([row.surface, row.outcome, row.usage.input_tokens], ['images', 'ok', 50]);
  });

  it("a route falls back before the upstream answers, and the upstream's 400 reaches the client in OpenAI's shape", async () => {
    upstream.reply((req) =>
      req.url.startsWith('/down/') ? json({ error: { message: 'overloaded', type: 'server_error' } }, 503) : imagesAnswer(req),
    );
    const { response } = await gw.client.images.generate({ model: 'painter', prompt: 'rain' }).withResponse();
    const row = await record(response);
    assert.deepEqual(
      row.attempts.map((a: { provider: string }) => a.provider),
      ['down', 'openai'],
    );
    assert.equal(row.provider, 'openai');

    upstream.reply(
      json({ error: { message: 'Your prompt was rejected.', type: 'image_generation_user_error', code: 'moderation_blocked', param: null } }, 400),
    );
    await assert.rejects(gw.client.images.generate({ model: 'openai/gpt-image-1', prompt: 'no' }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.BadRequestError, String(err));
      assert.match(err.message, /Your prompt was rejected/);
      assert.deepEqual((err.error as { upstream?: unknown }).upstream, {
        status: 400,
        type: 'image_generation_user_error',
        code: 'moderation_blocked',
      });
      return true;
    });
  });

  it('answers 400 naming the field, with a ledger row, before any upstream call', async () => {
    upstream.reply(imagesAnswer);
    const before = upstream.requests.length;
    const cases: [Record<string, unknown>, string][] = [
      [{ model: 'mock/echo', prompt: 'a' }, 'model'],
      [{ prompt: 'a' }, 'model'],
      [{ model: 'openai/gpt-image-1' }, 'prompt'],
      [{ model: 'openai/gpt-image-1', prompt: 'a', n: 11 }, 'n'],
      [{ model: 'openai/gpt-image-1', prompt: 'a', stream: 'yes' }, 'stream'],
    ];
    for (const [body, param] of cases) {
      const res = await fetch(`${gw.url}/v1/images/generations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 400, JSON.stringify(body));
      const error = ((await res.json()) as { error: { param: string; type: string } }).error;
      assert.deepEqual([error.param, error.type], [param, 'invalid_request_error'], JSON.stringify(body));
      const row = await record(res);
      assert.deepEqual([row.surface, row.outcome], ['images', 'error']);
    }
    assert.equal(upstream.requests.length, before, 'nothing reached the upstream');
  });

  it('the budget reserves the images asked for: a budget that cannot pay for them refuses the request up front', async () => {
    upstream.reply(imagesAnswer);
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 0.1 }]);
    const ask = (n: number) =>
      fetch(`${gw.url}/v1/images/generations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-test-key': 'painter' },
        body: JSON.stringify({ model: 'openai/dall-e-3', prompt: 'a', n }),
      });
    const refused = await ask(3);
    assert.equal(refused.status, 429);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'insufficient_quota');
    const before = upstream.requests.length;
    assert.equal((await ask(2)).status, 200);
    assert.equal(upstream.requests.length, before + 1);
  });
});

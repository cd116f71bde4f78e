import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Anthropic, { type APIError } from '@anthropic-ai/sdk';
import { geminiResponseOf } from '../helpers/gemini-fixtures.ts';
import { startGateway, type TestGateway, useUpstreamGateway } from '../helpers/gateway.ts';

/**
 * /v1/messages refusing as Anthropic does, read through @anthropic-ai/sdk's error classes: an
 * upstream's 429 is a RateLimitError carrying its retry-after, a body past server.body_limit_bytes
 * a 413 request_too_large (ContentTooLargeError), the request deadline a 504
 * (GatewayTimeoutError); and a parameter a translated target cannot
 * honour is a 400 naming it unless the provider's config says drop_params.
 */

const BODY_LIMIT = 4096;
const anthropic = (gw: TestGateway) => new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
const JSON_TYPE = { 'content-type': 'application/json' };
const question = { role: 'user' as const, content: 'Where is Berlin?' };
const GEMINI = 'google/gemini-2.5-flash';

/** What the SDK raised: its class, status, Anthropic error type, message and headers. */
async function refusal(call: () => Promise<unknown>): Promise<APIError> {
  try {
    await call();
  } catch (err) {
    assert.ok(err instanceof Anthropic.APIError, String(err));
    return err;
  }
  assert.fail('expected an error');
}

const typeOf = (err: APIError) => (err.error as { error: { type: string } }).error.type;

describe('/v1/messages error statuses through @anthropic-ai/sdk (a Gemini target)', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: {
      providers: { google: { base_url: url, api_key: 'AIza-e2e' } },
      server: { body_limit_bytes: BODY_LIMIT },
      stream: { deadline_s: 1 },
    },
  }));

  for (const stream of [false, true]) {
    it(`an upstream 429 is a RateLimitError, rate_limit_error with the upstream's retry-after (${stream ? 'stream' : 'whole'})`, async () => {
      upstream.reply({
        status: 429,
        headers: { ...JSON_TYPE, 'retry-after': '7' },
        body: JSON.stringify({ error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } }),
      });
      const err = await refusal(() =>
        stream
          ? anthropic(gw)
              .messages.stream({ model: GEMINI, max_tokens: 64, messages: [question] })
              .finalMessage()
          : anthropic(gw).messages.create({ model: GEMINI, max_tokens: 64, messages: [question] }),
      );
      assert.ok(err instanceof Anthropic.RateLimitError, `${err.constructor.name} ${err.status}`);
      assert.equal(err.status, 429);
      assert.equal(typeOf(err), 'rate_limit_error');
      assert.equal(err.headers?.get('retry-after'), '7');
    });
  }

  it('a body past server.body_limit_bytes is a 413 request_too_large, before any upstream call', async () => {
    const before = upstream.requests.length;
    const err = await refusal(() =>
      anthropic(gw).messages.create({ model: GEMINI, max_tokens: 64, messages: [{ role: 'user', content: 'x'.repeat(BODY_LIMIT * 2) }] }),
    );
    assert.ok(err instanceof Anthropic.ContentTooLargeError, `${err.constructor.name} ${err.status}`);
    assert.equal(err.status, 413);
    assert.equal(typeOf(err), 'request_too_large');
    assert.equal(upstream.requests.length, before);
  });

  for (const stream of [false, true]) {
    it(`an upstream slower than the deadline is a 504 timeout_error (${stream ? 'stream' : 'whole'})`, async () => {
      upstream.reply({ headers: JSON_TYPE, body: JSON.stringify(geminiResponseOf('gemini/text-2.5-flash.sse')), headerDelayMs: 5_000 });
      const err = await refusal(() =>
        stream
          ? anthropic(gw)
              .messages.stream({ model: GEMINI, max_tokens: 64, messages: [question] })
              .finalMessage()
          : anthropic(gw).messages.create({ model: GEMINI, max_tokens: 64, messages: [question] }),
      );
      assert.ok(err instanceof Anthropic.GatewayTimeoutError, `${err.constructor.name} ${err.status}`);
      assert.equal(err.status, 504);
      assert.equal(typeOf(err), 'timeout_error');
      assert.match(err.message, /deadline/i);
    });
  }
});

describe('/v1/messages drop_params on a translated target', () => {
  const webSearch = { type: 'web_search_20250305' as const, name: 'web_search' as const };
  const weather = {
    name: 'get_weather',
    description: 'Current weather for a city',
    input_schema: { type: 'object' as const, properties: { location: { type: 'string' } }, required: ['location'] },
  };
  const { upstream, gw } = useUpstreamGateway((url) => ({ config: { providers: { google: { base_url: url, api_key: 'AIza-e2e' } } } }));

  it("Anthropic's server tool is a 400 naming it; with drop_params it is left out and the rest goes to Gemini", async () => {
    const body = { model: GEMINI, max_tokens: 64, tools: [webSearch, weather], messages: [question] };
    const before = upstream.requests.length;
    const err = await refusal(() => anthropic(gw).messages.create(body));
    assert.ok(err instanceof Anthropic.BadRequestError, `${err.constructor.name} ${err.status}`);
    assert.equal(typeOf(err), 'invalid_request_error');
    assert.match(err.message, /tools\[0\]\.type/);
    assert.equal(upstream.requests.length, before);

    const dropping = await startGateway({ providers: { google: { base_url: upstream.url, api_key: 'AIza-e2e', drop_params: true } } });
    try {
      upstream.reply({ headers: JSON_TYPE, body: JSON.stringify(geminiResponseOf('gemini/text-2.5-flash.sse')) });
      const message = await anthropic(dropping).messages.create(body);
      assert.equal(message.type, 'message');
      assert.ok(message.content.length > 0);
      const sent = upstream.requests.at(-1)!.json as { tools: { functionDeclarations?: { name: string }[] }[] };
      assert.deepEqual(
        sent.tools.flatMap((t) => t.functionDeclarations ?? []).map((f) => f.name),
        ['get_weather'],
      );
      assert.equal(JSON.stringify(sent).includes('web_search'), false);
    } finally {
      await dropping.close();
    }
  });
});

describe('/v1/messages relayed to Anthropic: its 429 reaches the SDK as Anthropic sent it', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ env: { ANTHROPIC_API_KEY: 'sk-ant-e2e', ANTHROPIC_BASE_URL: url } }));

  it('a RateLimitError with rate_limit_error, its message and retry-after', async () => {
    const message = 'Number of request tokens has exceeded your per-minute rate limit';
    upstream.reply({
      status: 429,
      headers: { ...JSON_TYPE, 'retry-after': '12' },
      body: JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message } }),
    });
    const err = await refusal(() => anthropic(gw).messages.create({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 64, messages: [question] }));
    assert.ok(err instanceof Anthropic.RateLimitError, `${err.constructor.name} ${err.status}`);
    assert.equal(typeOf(err), 'rate_limit_error');
    assert.match(err.message, /per-minute rate limit/);
    assert.equal(err.headers?.get('retry-after'), '12');
  });
});

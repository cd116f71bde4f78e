import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import OpenAI, { AuthenticationError, RateLimitError } from 'openai';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { rawStream, startGateway, type TestGateway, upstreamConfig, useUpstreamGateway } from '../helpers/gateway.ts';
import { chatRequest, streamRequest } from './faults-support.ts';

const json = { 'content-type': 'application/json' };

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/** A POST with an arbitrary body text (invalid JSON included). */
async function post(url: string, body: string, headers: Record<string, string> = json) {
  const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers, body });
  return { status: res.status, headers: res.headers, body: (await res.json()) as { error: Record<string, unknown> } };
}

describe('upstream HTTP errors before the stream', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway({
      ...upstreamConfig(upstream.url),
      providers: {
        up: { base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' },
        down: { base_url: `http://127.0.0.1:${await closedPort()}/v1`, api_key: 'sk-down' },
      },
    });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  const cases: {
    name: string;
    status: number;
    body: string;
    headers?: Record<string, string>;
    expect: { status: number; type: string; code: string; param?: string | null; message: RegExp };
  }[] = [
    {
      name: "400 with an OpenAI error body keeps status, message and param; its own code stays beside sluice's",
      status: 400,
      body: JSON.stringify({
        error: {
          message: "Invalid 'messages[0].content': string too long.",
          type: 'invalid_request_error',
          param: 'messages[0].content',
          code: 'string_above_max_length',
        },
      }),
      expect: {
        status: 400,
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: 'messages[0].content',
        message: /^Invalid 'messages\[0\]\.content': string too long\.$/,
      },
    },
    {
      name: "401 means sluice's credentials were refused: 502, not the client's fault",
      status: 401,
      body: JSON.stringify({
        error: { message: 'Incorrect API key provided: sk-upstr***', type: 'invalid_request_error', code: 'invalid_api_key' },
      }),
      expect: {
        status: 502,
        type: 'upstream_error',
        code: 'upstream_authentication_failed',
        message: /^up refused sluice's credentials: Incorrect API key provided/,
      },
    },
    {
      name: '404 stays 404',
      status: 404,
      body: JSON.stringify({ error: { message: 'The model `gpt-9` does not exist.', code: 'model_not_found' } }),
      expect: { status: 404, type: 'invalid_request_error', code: 'model_not_found', message: /gpt-9/ },
    },
    {
      name: '500 becomes 502',
      status: 500,
      body: JSON.stringify({ error: { message: 'The server had an error while processing your request.' } }),
      expect: { status: 502, type: 'upstream_error', code: 'upstream_error', message: /^The server had an error/ },
    },
    {
      name: '503 stays 503',
      status: 503,
      body: JSON.stringify({ error: { message: 'The engine is currently overloaded.' } }),
      expect: { status: 503, type: 'server_error', code: 'upstream_overloaded', message: /overloaded/ },
    },
    {
      name: '529 (overloaded) becomes 503',
      status: 529,
      body: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
      expect: { status: 503, type: 'server_error', code: 'upstream_overloaded', message: /^Overloaded$/ },
    },
    {
      name: 'an empty error body still gives a message',
      status: 500,
      body: '',
      expect: { status: 502, type: 'upstream_error', code: 'upstream_error', message: /^up returned HTTP 500 with no error message\.$/ },
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      upstream.reply({ status: c.status, headers: { ...json, ...c.headers }, body: c.body });
      const res = await rawStream(gw.url, chatRequest());
      assert.equal(res.status, c.expect.status);
      assert.equal(res.headers.get('content-type'), 'application/json');
      const { error } = JSON.parse(res.text);
      assert.deepEqual(
        { type: error.type, code: error.code, param: error.param },
        { type: c.expect.type, code: c.expect.code, param: c.expect.param ?? null },
      );
      assert.match(error.message, c.expect.message);
    });
  }

  it('429 passes retry-after on, and the SDK raises RateLimitError', async () => {
    upstream.reply({
      status: 429,
      headers: { ...json, 'retry-after': '7' },
      body: JSON.stringify({ error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } }),
    });
    const res = await rawStream(gw.url, chatRequest());
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '7');
    assert.equal(JSON.parse(res.text).error.code, 'rate_limit_exceeded');

    await assert.rejects(gw.client.chat.completions.create(streamRequest), (err: unknown) => {
      assert.ok(err instanceof RateLimitError);
      assert.equal(err.headers?.get('retry-after'), '7');
      assert.match(err.message, /Rate limit reached for requests/);
      return true;
    });
  });

  it('connection refused: 502 upstream_connection_error', async () => {
    const res = await rawStream(gw.url, chatRequest({ model: 'down/gpt-4o' }));
    assert.equal(res.status, 502);
    const { error } = JSON.parse(res.text);
    assert.equal(error.code, 'upstream_connection_error');
    assert.match(error.message, /^Could not complete the request to down: .*ECONNREFUSED/);
  });
});

describe('bad requests', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ config: { ...upstreamConfig(url), server: { body_limit_bytes: 1024 } } }));

  const user = [{ role: 'user', content: 'hi' }];
  const table: [name: string, body: unknown, param: string | null, message: RegExp][] = [
    ['missing model', { messages: user }, 'model', /^Invalid value for 'model'/],
    ['missing messages', { model: 'up/m' }, 'messages', /^Invalid value for 'messages'/],
    ['empty messages', { model: 'up/m', messages: [] }, 'messages', /^Invalid value for 'messages'/],
    [
      'a bad role',
      { model: 'up/m', messages: [{ role: 'bot', content: 'hi' }] },
      'messages[0].role',
      /^Invalid value for 'messages\[0\]\.role': must be one of system, developer, user, assistant, tool, function\.$/,
    ],
    ['temperature 3', { model: 'up/m', messages: user, temperature: 3 }, 'temperature', /^Invalid value for 'temperature'/],
    ['n 0', { model: 'up/m', messages: user, n: 0 }, 'n', /^Invalid value for 'n'/],
    [
      'top_logprobs without logprobs',
      { model: 'up/m', messages: user, top_logprobs: 2 },
      'top_logprobs',
      /^top_logprobs requires logprobs to be true\.$/,
    ],
    [
      'stream_options without stream',
      { model: 'up/m', messages: user, stream_options: { include_usage: true } },
      'stream_options',
      /^stream_options is only allowed when stream is true\.$/,
    ],
    ['a JSON array body', [1, 2], null, /^The request body must be a JSON object\.$/],
    ['a JSON string body', 'hello', null, /^The request body must be a JSON object\.$/],
    [
      'a tool with a bad function name',
      { model: 'up/m', messages: user, tools: [{ type: 'function', function: { name: 'get weather!' } }] },
      'tools[0].function.name',
      /must be 1-64 letters, digits, _ or -/,
    ],
    [
      'a function tool without its function',
      { model: 'up/m', messages: user, tools: [{ type: 'function' }] },
      'tools[0].function',
      /a function tool needs its `function` object/,
    ],
  ];

  for (const [name, body, param, message] of table) {
    it(`400 for ${name}, naming ${param ?? 'no param'}`, async () => {
      const seen = upstream.requests.length;
      const res = await post(gw.url, JSON.stringify(body));
      assert.equal(res.status, 400);
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.code, 'invalid_request');
      assert.equal(res.body.error.param, param);
      assert.match(String(res.body.error.message), message);
      assert.equal(upstream.requests.length, seen, 'nothing reached the upstream');
    });
  }

  it('400 invalid_json for a body that is not JSON', async () => {
    const res = await post(gw.url, '{"model": "up/m", "messages": [');
    assert.equal(res.status, 400);
    assert.deepEqual(
      { type: res.body.error.type, code: res.body.error.code, param: res.body.error.param },
      { type: 'invalid_request_error', code: 'invalid_json', param: null },
    );
    assert.match(String(res.body.error.message), /^We could not parse the JSON body of your request: /);
  });

  it('413 for a body over server.body_limit_bytes, declared or chunked', async () => {
    const big = JSON.stringify({ model: 'up/m', messages: [{ role: 'user', content: 'x'.repeat(2048) }] });
    const declared = await post(gw.url, big);
    assert.equal(declared.status, 413);
    assert.equal(declared.body.error.code, 'request_too_large');

    // No content-length: the limit is enforced while reading.
    const bytes = new TextEncoder().encode(big);
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: json,
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 256) controller.enqueue(bytes.subarray(i, i + 256));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    assert.equal(res.status, 413);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'request_too_large');
  });

  for (const model of ['nope/x', 'gpt-4o']) {
    it(`404 model_not_found for ${model}`, async () => {
      const res = await post(gw.url, JSON.stringify({ model, messages: user }));
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'model_not_found');
      assert.equal(res.body.error.param, 'model');
      assert.match(String(res.body.error.message), new RegExp(`^The model \`${model}\` does not exist`));
    });
  }

  for (const [method, path, status, code] of [
    ['GET', '/v1/chat/completions', 405, 'method_not_allowed'],
    ['POST', '/v1/nope', 404, 'route_not_found'],
    ['GET', '/nope', 404, 'route_not_found'],
  ] as const) {
    it(`${status} for ${method} ${path}`, async () => {
      const res = await fetch(`${gw.url}${path}`, { method });
      assert.equal(res.status, status);
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(error.code, code);
      assert.ok(error.message.includes(path));
    });
  }
});

describe('auth with a master key', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ config: { ...upstreamConfig(url), auth: { master_key: 'sk-master' } } }));

  it('401 missing_api_key without a key, 401 invalid_api_key with a wrong one', async () => {
    const body = JSON.stringify(chatRequest());
    const missing = await post(gw.url, body);
    assert.equal(missing.status, 401);
    assert.equal(missing.body.error.code, 'missing_api_key');
    assert.equal(missing.body.error.type, 'authentication_error');

    const wrong = await post(gw.url, body, { ...json, authorization: 'Bearer sk-wrong' });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error.code, 'invalid_api_key');

    const sdk = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-wrong', maxRetries: 0 });
    await assert.rejects(sdk.chat.completions.create(streamRequest), AuthenticationError);
    assert.equal(upstream.requests.length, 0, 'nothing reached the upstream');
  });

  it('/healthz stays open, the right key goes through', async () => {
    const health = await fetch(`${gw.url}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { status: string }).status, 'ok');

    upstream.reply({ status: 429, headers: json, body: '{"error":{"message":"slow down"}}' });
    await assert.rejects(gw.client.chat.completions.create(streamRequest), RateLimitError);
    assert.equal(upstream.requests.at(-1)?.headers.authorization, 'Bearer sk-upstream');
  });
});

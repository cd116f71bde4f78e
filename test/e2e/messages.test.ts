import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { adminCall, projectWithKey } from '../helpers/admin-client.ts';
import { parseSse, rawStream, startGateway, type TestGateway } from '../helpers/gateway.ts';

const MASTER = 'sk-master-messages';
const APP = 'https://app.example';

/** The official Anthropic SDK pointed at sluice: base URL the gateway's origin, key in x-api-key. */
const anthropic = (gw: TestGateway, apiKey = MASTER) => new Anthropic({ baseURL: gw.url, apiKey, maxRetries: 0, timeout: 20_000 });

/** GET /v1/requests/{id}: the ledger row (the request log reads its writes). */
async function ledgerRow(gw: TestGateway, messageId: string): Promise<Record<string, any>> {
  const res = await fetch(`${gw.url}/v1/requests/${messageId.slice('msg_'.length)}`, { headers: { authorization: `Bearer ${MASTER}` } });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as Record<string, any>;
}

const weatherTool = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: { type: 'object' as const, properties: { location: { type: 'string' } }, required: ['location'] },
};

describe('/v1/messages with the mock provider, through @anthropic-ai/sdk', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({
      auth: { master_key: MASTER },
      server: { cors_origins: [APP] },
      routes: { steady: { targets: [{ model: 'mock/unavailable' }, { model: 'mock/echo' }] } },
    });
  });
  after(() => gw.close());

  it('answers a whole message, accounted in the ledger as the messages surface', async () => {
    const message = await anthropic(gw).messages.create({
      model: 'mock/echo',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    assert.equal(message.type, 'message');
    assert.equal(message.role, 'assistant');
    assert.equal(message.model, 'mock/echo');
    assert.deepEqual(message.content, [{ type: 'text', text: 'You said: hello there' }]);
    assert.equal(message.stop_reason, 'end_turn');
    assert.ok(message.usage.input_tokens > 0);
    assert.equal(message.usage.output_tokens, 4);
    const record = await ledgerRow(gw, message.id);
    assert.equal(record.surface, 'messages');
    assert.equal(record.outcome, 'ok');
    assert.equal(record.streamed, false);
    assert.equal(record.usage.output_tokens, 4);
    assert.equal(record.usage.input_tokens, message.usage.input_tokens);
    assert.equal(record.finish_reason, 'stop');
  });

  it('streams text with message_start usage, block events and message_delta, as the SDK accumulates them', async () => {
    const stream = anthropic(gw).messages.stream({
      model: 'mock/reasoning',
      max_tokens: 4000,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [{ role: 'user', content: 'ping' }],
    });
    const events: string[] = [];
    stream.on('streamEvent', (event) => events.push(event.type));
    const message = await stream.finalMessage();
    assert.equal(message.content.length, 2);
    assert.equal(message.content[0].type, 'thinking');
    assert.equal(message.content[1].type, 'text');
    assert.equal((message.content[1] as Anthropic.TextBlock).text, 'You said: ping');
    assert.equal(events[0], 'message_start');
    assert.deepEqual(events.slice(-2), ['message_delta', 'message_stop']);
    assert.ok(message.usage.input_tokens > 0);
    assert.ok(message.usage.output_tokens > 0);
  });

  it('runs a tool-use round trip: tool_use with streamed input, then the tool_result answered with text', async () => {
    const client = anthropic(gw);
    const first = await client.messages
      .stream({ model: 'mock/tools', max_tokens: 200, tools: [weatherTool], messages: [{ role: 'user', content: 'Weather in Paris?' }] })
      .finalMessage();
    assert.equal(first.stop_reason, 'tool_use');
    const call = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    assert.deepEqual(call && { name: call.name, input: call.input }, { name: 'get_weather', input: { location: 'Paris', unit: 'celsius' } });
    const second = await client.messages.create({
      model: 'mock/tools',
      max_tokens: 200,
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call!.id, content: '18C and sunny' }] },
      ],
    });
    assert.equal(second.stop_reason, 'end_turn');
    assert.equal(second.content[0].type, 'text');
  });

  it('refuses in Anthropic error shapes: 400 naming the field, 401, 404, and a 529 for an overloaded upstream', async () => {
    const client = anthropic(gw);
    const refused = async (call: () => Promise<unknown>) => {
      try {
        await call();
      } catch (err) {
        assert.ok(err instanceof Anthropic.APIError, String(err));
        return { status: err.status, type: err.type, message: (err.error as { error: { message: string } }).error.message };
      }
      assert.fail('expected an error');
    };
    const bad = await refused(() => client.messages.create({ model: 'mock/echo', max_tokens: 0, messages: [{ role: 'user', content: 'x' }] }));
    assert.equal(bad.status, 400);
    assert.equal(bad.type, 'invalid_request_error');
    assert.match(bad.message, /max_tokens/);
    const unauth = await refused(() =>
      anthropic(gw, 'sk-wrong').messages.create({ model: 'mock/echo', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
    );
    assert.deepEqual([unauth.status, unauth.type], [401, 'authentication_error']);
    const missing = await refused(() => client.messages.create({ model: 'nope/x', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }));
    assert.deepEqual([missing.status, missing.type], [404, 'not_found_error']);
    const overloaded = await refused(() =>
      client.messages.create({ model: 'mock/unavailable', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
    );
    assert.deepEqual([overloaded.status, overloaded.type], [529, 'overloaded_error']);
  });

  it('ends a stream that fails mid-way with an Anthropic error event, which the SDK raises', async () => {
    const raw = await rawStream(
      gw.url,
      { model: 'mock/error', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'x' }] },
      { 'x-api-key': MASTER },
      '/v1/messages',
    );
    assert.equal(raw.status, 200);
    const frames = parseSse(raw.text).frames.filter((f) => f.event);
    const last = frames.at(-1)!;
    assert.equal(last.event, 'error');
    assert.deepEqual(JSON.parse(last.data), {
      type: 'error',
      error: { type: 'api_error', message: 'The mock provider failed mid-stream, as mock/error always does.' },
    });
    await assert.rejects(
      anthropic(gw)
        .messages.stream({ model: 'mock/error', max_tokens: 50, messages: [{ role: 'user', content: 'x' }] })
        .finalMessage(),
      (err: unknown) => err instanceof Anthropic.APIError && err.type === 'api_error',
    );
  });

  it("follows a route's fallback before the first output, streamed and not", async () => {
    const client = anthropic(gw);
    const request = { model: 'steady', max_tokens: 64, messages: [{ role: 'user' as const, content: 'hello' }] };
    const streamed = await client.messages.stream(request).finalMessage();
    assert.deepEqual(streamed.content, [{ type: 'text', text: 'You said: hello' }]);
    const whole = await client.messages.create(request);
    assert.deepEqual(whole.content, [{ type: 'text', text: 'You said: hello' }]);
    const row = await ledgerRow(gw, streamed.id);
    assert.deepEqual(
      row.attempts.map((a: { provider: string; model: string }) => `${a.provider}/${a.model}`),
      ['mock/unavailable', 'mock/echo'],
    );
  });

  it('keeps a quiet stream alive with ping events, and ends at message_stop without [DONE]', async () => {
    const quiet = await startGateway({ auth: { master_key: MASTER }, stream: { heartbeat_s: 0.1 } });
    try {
      const raw = await rawStream(
        quiet.url,
        { model: 'mock/slow', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'a b' }] },
        { 'x-api-key': MASTER },
        '/v1/messages',
      );
      assert.equal(raw.status, 200);
      const { frames, comments } = parseSse(raw.text);
      assert.deepEqual(comments, []);
      const pings = frames.filter((f) => f.event === 'ping');
      assert.ok(pings.length > 0, 'pings while the mock waits between tokens');
      for (const ping of pings) assert.deepEqual(JSON.parse(ping.data), { type: 'ping' });
      assert.equal(frames.at(-1)?.event, 'message_stop');
      assert.ok(!raw.text.includes('[DONE]'));
    } finally {
      await quiet.close();
    }
  });

  it('counts tokens locally for a provider without a count endpoint, flagged as an estimate', async () => {
    const count = await anthropic(gw).messages.countTokens({ model: 'mock/echo', messages: [{ role: 'user', content: 'hello there' }] });
    assert.ok(count.input_tokens > 0);
    assert.equal((count as unknown as { estimated?: boolean }).estimated, true);
  });

  it("lets a browser page send the Anthropic SDK's headers (CORS preflight)", async () => {
    const headers = 'anthropic-dangerous-direct-browser-access,anthropic-version,content-type,x-api-key,x-stainless-lang';
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'OPTIONS',
      headers: { origin: APP, 'access-control-request-method': 'POST', 'access-control-request-headers': headers },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-headers'), headers.split(',').join(', '));
  });
});

describe("/v1/messages on a project's endpoint, with a gateway-issued key", () => {
  const PROJECT = 'proj_messages';
  let gw: TestGateway;
  let key: string;
  let narrowKey: string;
  before(async () => {
    gw = await startGateway({ auth: { master_key: MASTER }, model_list: [{ model_name: 'fast', model: 'mock/echo' }] });
    key = (await projectWithKey(gw.url, MASTER, PROJECT)).key;
    narrowKey = (await projectWithKey(gw.url, MASTER, PROJECT, { models: ['fast'] })).key;
    assert.equal((await adminCall(gw.url, MASTER, 'POST', '/admin/endpoints', { project: PROJECT, name: 'claude-code', model: 'fast' })).status, 201);
  });
  after(() => gw.close());

  it("the SDK with base URL /{project}/{endpoint}: a bare model name means the endpoint's model, counted there too", async () => {
    const client = new Anthropic({ baseURL: `${gw.url}/${PROJECT}/claude-code`, apiKey: key, maxRetries: 0 });
    const message = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(message.model, 'claude-sonnet-4-5');
    assert.deepEqual(message.content, [{ type: 'text', text: 'You said: hi' }]);
    const count = await client.messages.countTokens({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] });
    assert.ok(count.input_tokens > 0);
  });

  it("a key's allowed models hold for counting too: 403 permission_error", async () => {
    const client = new Anthropic({ baseURL: gw.url, apiKey: narrowKey, maxRetries: 0 });
    assert.ok((await client.messages.countTokens({ model: 'fast', messages: [{ role: 'user', content: 'hi' }] })).input_tokens > 0);
    await assert.rejects(
      client.messages.countTokens({ model: 'mock/reasoning', messages: [{ role: 'user', content: 'hi' }] }),
      (err: unknown) => err instanceof Anthropic.APIError && err.status === 403 && err.type === 'permission_error',
    );
  });
});

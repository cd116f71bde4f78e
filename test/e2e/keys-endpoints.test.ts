import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { adminCall, chatWith, projectWithKey } from '../helpers/admin-client.ts';
import { parseSse, startGateway, type TestGateway } from '../helpers/gateway.ts';

const MASTER = 'sk-master-endpoints-test';
// The project id and endpoint of shared/reference/chat-streaming-full.txt's client examples.
const PROJECT = 'proj_ABC123';

describe("a project's endpoints: /{project}/{endpoint}/v1/...", () => {
  let gw: TestGateway;
  let key: Record<string, any>;
  let otherProjectKey: Record<string, any>;

  before(async () => {
    gw = await startGateway({
      auth: { master_key: MASTER },
      ledger: { flush_interval_ms: 10 },
      model_list: [{ model_name: 'fast', model: 'mock/echo' }],
    });
    key = await projectWithKey(gw.url, MASTER, PROJECT);
    otherProjectKey = await projectWithKey(gw.url, MASTER, 'proj_other');
    const endpoint = (body: Record<string, unknown>) => adminCall(gw.url, MASTER, 'POST', '/admin/endpoints', { project: PROJECT, ...body });
    assert.equal((await endpoint({ name: 'my-endpoint', model: 'fast' })).status, 201);
    assert.equal(
      (await endpoint({ name: 'metered', model: 'mock/echo', stream_profile: 'accounting', usage: 'always', error_style: 'event' })).status,
      201,
    );
    assert.equal((await endpoint({ name: 'events', model: 'mock/echo', usage: 'always', error_style: 'event' })).status, 201);
  });
  after(() => gw?.close());

  const base = (endpoint: string) => `${gw.url}/${PROJECT}/${endpoint}/v1`;

  it("the reference's client works unchanged: a bare model name means the endpoint's model, echoed as sent", async () => {
    const client = new OpenAI({ baseURL: base('my-endpoint'), apiKey: key.key, maxRetries: 0 });
    const { data: stream, response } = await client.chat.completions
      .create({
        model: 'llama-3.1-8b',
        messages: [{ role: 'user', content: 'Hello!' }],
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    let text = '';
    const models = new Set<string>();
    let usage = false;
    for await (const chunk of stream) {
      models.add(chunk.model);
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = true;
    }
    assert.match(text, /Hello!/);
    assert.deepEqual([...models], ['llama-3.1-8b']);
    assert.ok(usage);
    const row = (await adminCall(gw.url, MASTER, 'GET', `/v1/requests/${response.headers.get('x-request-id')}`)).body;
    assert.equal(row.project_id, PROJECT);
    assert.equal(row.requested_model, 'llama-3.1-8b');
    assert.equal(`${row.provider}/${row.model}`, 'mock/echo');
  });

  it('no model at all is the endpoint model; a name that resolves is used as on /v1; /responses too', async () => {
    const bare = await chatWith(gw.url, key.key, { model: undefined }, `/${PROJECT}/my-endpoint/v1/chat/completions`);
    assert.equal(bare.status, 200);
    assert.equal(bare.body.model, 'fast');
    const named = await chatWith(gw.url, key.key, { model: 'mock/reasoning' }, `/${PROJECT}/my-endpoint/v1/chat/completions`);
    assert.equal(named.status, 200);
    assert.ok(named.body.choices[0].message.reasoning_content);
    const client = new OpenAI({ baseURL: base('my-endpoint'), apiKey: key.key, maxRetries: 0 });
    const response = await client.responses.create({ model: 'llama-3.1-8b', input: 'Hi there' });
    assert.equal(response.status, 'completed');
    assert.match(response.output_text, /Hi there/);
  });

  it("the endpoint's stream settings apply: usage always, the accounting profile, event error frames", async () => {
    const path = (endpoint: string) => `/${PROJECT}/${endpoint}/v1/chat/completions`;
    const metered = await chatWith(gw.url, key.key, { model: 'm', stream: true }, path('metered'));
    const { frames } = parseSse(metered.text);
    assert.equal(frames[0].event, 'usage_start');
    assert.ok(frames.some((f) => f.event === 'usage_final'));
    const events = parseSse((await chatWith(gw.url, key.key, { model: 'm', stream: true }, path('events'))).text).frames;
    const usageChunk = events.find((f) => f.data !== '[DONE]' && JSON.parse(f.data).usage);
    assert.ok(usageChunk, 'usage: always sends the usage chunk without stream_options');
    const failed = parseSse((await chatWith(gw.url, key.key, { model: 'mock/error', stream: true }, path('events'))).text).frames;
    assert.equal(failed.at(-2)?.event, 'error');
    // The header still chooses per request; the plain base URL keeps the config's settings.
    const header = await fetch(`${gw.url}${path('metered')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key.key}`, 'x-sluice-profile': 'openai' },
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.ok(!parseSse(await header.text()).frames.some((f) => f.event));
    const plain = parseSse((await chatWith(gw.url, key.key, { model: 'mock/echo', stream: true })).text).frames;
    assert.ok(!plain.some((f) => f.event || (f.data !== '[DONE]' && JSON.parse(f.data).usage)));
  });

  it("another project's key gets the 404 of an unknown endpoint; no key is a 401 first; the master key reaches it", async () => {
    const path = `/${PROJECT}/my-endpoint/v1/chat/completions`;
    for (const [who, p] of [
      [otherProjectKey.key, path],
      [key.key, `/${PROJECT}/nowhere/v1/chat/completions`],
      [key.key, '/proj_missing/my-endpoint/v1/chat/completions'],
    ] as const) {
      const res = await chatWith(gw.url, who, { model: 'fast' }, p);
      assert.equal(res.status, 404, p);
      assert.equal(res.body.error.code, 'endpoint_not_found');
    }
    assert.equal((await chatWith(gw.url, undefined, { model: 'fast' }, `/${PROJECT}/nowhere/v1/chat/completions`)).status, 401);
    assert.equal((await chatWith(gw.url, MASTER, { model: 'x' }, path)).status, 200);
  });

  it("a key allowed the endpoint's model may use it under any bare name, and nothing else", async () => {
    const limited = await projectWithKey(gw.url, MASTER, PROJECT, { models: ['fast'] });
    const path = `/${PROJECT}/my-endpoint/v1/chat/completions`;
    assert.equal((await chatWith(gw.url, limited.key, { model: 'llama-3.1-8b' }, path)).status, 200);
    const refused = await chatWith(gw.url, limited.key, { model: 'mock/reasoning' }, path);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.param, 'model');
  });
});

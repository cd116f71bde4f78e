import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chatRequestSchema } from '../../surfaces/chat/request-schema.ts';
import { chatToCanonical } from '../../surfaces/chat/to-canonical.ts';
import { UpstreamClient } from '../../upstream/http-client.ts';
import { type FakeUpstream, startFakeUpstream } from '../../../test/helpers/fake-upstream.ts';
import { nativeProviders } from '../native-providers.ts';
import { googleProvider } from './index.ts';

describe('the google provider definition', () => {
  let upstream: FakeUpstream;
  const client = new UpstreamClient({ connectTimeoutMs: 2000, headersTimeoutMs: 2000 });
  const request = chatToCanonical(chatRequestSchema.parse({ model: 'google/gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }] }));
  before(async () => {
    upstream = await startFakeUpstream();
    upstream.reply({
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ candidates: [{ content: { parts: [{ text: 'Hello' }] }, finishReason: 'STOP' }] }),
    });
  });
  after(async () => {
    await client.close();
    await upstream.close();
  });

  /** Calls the adapter once and returns what reached the upstream. */
  async function callThrough(env: NodeJS.ProcessEnv, fromFile?: Parameters<typeof googleProvider.create>[1]) {
    const adapter = googleProvider.create(env, fromFile, client);
    assert.ok(adapter);
    const events = await adapter.complete(request, 'gemini-2.5-flash', { signal: AbortSignal.timeout(5000), requestId: 'r' });
    assert.deepEqual(
      events.filter((e) => e.type === 'text'),
      [{ type: 'text', choice: 0, text: 'Hello' }],
    );
    return upstream.requests.at(-1);
  }

  it('is registered as a native provider', () => {
    assert.ok(nativeProviders.includes(googleProvider));
    assert.equal(googleProvider.enableHint, 'GEMINI_API_KEY');
  });

  it('is off without a key or a config entry', () => {
    assert.equal(googleProvider.create({ GEMINI_BASE_URL: upstream.url }, undefined, client), undefined);
  });

  it('GEMINI_API_KEY and GEMINI_BASE_URL enable it', async () => {
    const sent = await callThrough({ GEMINI_API_KEY: 'gk', GEMINI_BASE_URL: upstream.url });
    assert.equal(sent?.url, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(sent?.headers['x-goog-api-key'], 'gk');
  });

  it('GOOGLE_API_KEY works too; GEMINI_API_KEY wins when both are set', async () => {
    assert.equal((await callThrough({ GOOGLE_API_KEY: 'google', GEMINI_BASE_URL: upstream.url }))?.headers['x-goog-api-key'], 'google');
    const both = await callThrough({ GOOGLE_API_KEY: 'google', GEMINI_API_KEY: 'gemini', GEMINI_BASE_URL: upstream.url });
    assert.equal(both?.headers['x-goog-api-key'], 'gemini');
  });

  it('a config entry enables it and its key, base URL and models win over the environment', async () => {
    const fromFile = { api_key: 'file-key', base_url: `${upstream.url}/v1beta`, models: ['gemini-2.5-flash'] };
    const sent = await callThrough({ GEMINI_API_KEY: 'env-key', GEMINI_BASE_URL: 'http://127.0.0.1:9' }, fromFile);
    assert.equal(sent?.url, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(sent?.headers['x-goog-api-key'], 'file-key');
    assert.deepEqual(googleProvider.create({}, fromFile, client)?.listModels(), ['gemini-2.5-flash']);
  });
});

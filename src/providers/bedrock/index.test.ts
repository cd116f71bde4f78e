import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chatRequestSchema } from '../../surfaces/chat/request-schema.ts';
import { chatToCanonical } from '../../surfaces/chat/to-canonical.ts';
import { UpstreamClient } from '../../upstream/http-client.ts';
import { type FakeUpstream, startFakeUpstream } from '../../../test/helpers/fake-upstream.ts';
import { bedrockProvider } from './index.ts';

const converseReply = {
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    output: { message: { role: 'assistant', content: [{ text: 'Hi' }] } },
    stopReason: 'end_turn',
    usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
  }),
};

describe('bedrock provider definition', () => {
  let upstream: FakeUpstream;
  const client = new UpstreamClient({ connectTimeoutMs: 2000, headersTimeoutMs: 2000 });
  before(async () => {
    upstream = await startFakeUpstream();
    upstream.reply(converseReply);
  });
  after(async () => {
    await client.close();
    await upstream.close();
  });

  async function call(env: NodeJS.ProcessEnv, fromFile?: Record<string, unknown>) {
    const adapter = bedrockProvider.create(env, fromFile, client);
    assert.ok(adapter);
    const request = chatToCanonical(
      chatRequestSchema.parse({ model: 'bedrock/amazon.nova-micro-v1:0', messages: [{ role: 'user', content: 'hi' }] }),
    );
    await adapter.complete(request, 'amazon.nova-micro-v1:0', { signal: new AbortController().signal, requestId: 'r1' });
    return upstream.requests.at(-1)!;
  }

  it('is off without credentials, even with a config entry', () => {
    assert.equal(bedrockProvider.create({}, undefined, client), undefined);
    assert.equal(bedrockProvider.create({ AWS_ACCESS_KEY_ID: 'AKID' }, { region: 'eu-west-1' }, client), undefined);
  });

  it('signs with the IAM keys from the environment, for AWS_REGION, at the endpoint override', async () => {
    const sent = await call({
      AWS_ACCESS_KEY_ID: 'AKID',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_SESSION_TOKEN: 'token',
      AWS_REGION: 'eu-central-1',
      AWS_ENDPOINT_URL_BEDROCK_RUNTIME: upstream.url,
    });
    assert.equal(sent.url, '/model/amazon.nova-micro-v1%3A0/converse');
    assert.match(String(sent.headers.authorization), /^AWS4-HMAC-SHA256 Credential=AKID\/\d{8}\/eu-central-1\/bedrock\/aws4_request, /);
    assert.equal(sent.headers['x-amz-security-token'], 'token');
    assert.equal(sent.headers.host, new URL(upstream.url).host);
  });

  it('the config region wins over AWS_REGION', async () => {
    const sent = await call(
      { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-central-1' },
      { region: 'ap-south-1', base_url: upstream.url },
    );
    assert.match(String(sent.headers.authorization), /\/ap-south-1\/bedrock\/aws4_request/);
  });

  it('a Bedrock API key (env or config api_key) is sent as a bearer token and wins over IAM keys', async () => {
    const env = { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_ENDPOINT_URL_BEDROCK_RUNTIME: upstream.url };
    const fromEnv = await call({ ...env, AWS_BEARER_TOKEN_BEDROCK: 'bedrock-api-key' });
    assert.equal(fromEnv.headers.authorization, 'Bearer bedrock-api-key');
    assert.equal(fromEnv.headers['x-amz-date'], undefined);
    const fromFile = await call({ AWS_BEARER_TOKEN_BEDROCK: 'env-key' }, { api_key: 'file-key', base_url: upstream.url });
    assert.equal(fromFile.headers.authorization, 'Bearer file-key');
  });

  it('lists the configured models', () => {
    const adapter = bedrockProvider.create({ AWS_BEARER_TOKEN_BEDROCK: 'k' }, { models: ['us.amazon.nova-micro-v1:0'] }, client);
    assert.deepEqual(adapter?.listModels(), ['us.amazon.nova-micro-v1:0']);
  });
});

import assert from 'node:assert/strict';
import { createVerify, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { APIError } from 'openai';
import { anthropicPayloads, anthropicStreamBody } from '../helpers/anthropic-fixtures.ts';
import type { RecordedRequest } from '../helpers/fake-upstream.ts';
import { rawStream, requestRecord, useUpstreamGateway } from '../helpers/gateway.ts';
import { geminiPayloads, geminiStreamBody } from '../helpers/gemini-fixtures.ts';
import { collect } from '../helpers/collect-chat-stream.ts';

const GEMINI = 'gemini/vertex-text-2.5-flash.sse';
const CLAUDE = 'anthropic/text-haiku45-2.sse';
const jsonReply = (body: unknown, status = 200) => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const sse = (body: Buffer) => ({ headers: { 'content-type': 'text/event-stream' }, body, randomSplit: { seed: 5, maxPiece: 48 } });

/** A service-account key made for the test (node:crypto), its token_uri at the fake upstream. */
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const keyDir = mkdtempSync(join(tmpdir(), 'sluice-vertex-'));
const keyFile = join(keyDir, 'key.json');
after(() => rmSync(keyDir, { recursive: true, force: true }));
function writeKey(tokenUri: string) {
  writeFileSync(
    keyFile,
    JSON.stringify({
      type: 'service_account',
      project_id: 'proj-1',
      private_key_id: 'kid-1',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
      client_email: 'sluice@proj-1.iam.gserviceaccount.com',
      client_id: '1',
      token_uri: tokenUri,
    }),
  );
}

/** The JWT a token request carries, checked against the key's public half. */
function assertion(req: RecordedRequest): Record<string, any> {
  const form = new URLSearchParams(req.body);
  assert.equal(form.get('grant_type'), 'urn:ietf:params:oauth:grant-type:jwt-bearer');
  const [header, payload, signature] = form.get('assertion')!.split('.');
  const verify = createVerify('RSA-SHA256');
  verify.update(`${header}.${payload}`);
  assert.ok(verify.verify(publicKey, Buffer.from(signature, 'base64url')), 'the JWT is signed with the key');
  return JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, any>;
}

describe('vertex: a service-account key, Gemini and Claude in a region', () => {
  let tokens = 0;
  const { upstream, gw } = useUpstreamGateway((url) => {
    writeKey(`${url}/token`);
    return {
      config: { providers: { vertex: { project: 'proj-1', region: 'us-east5', base_url: url, credentials_file: keyFile } } },
    };
  });
  const calls = () => upstream.requests.filter((r) => r.url !== '/token');
  const token = (req: RecordedRequest) => {
    if (req.url !== '/token') return undefined;
    tokens++;
    return jsonReply({ access_token: `ya29.test-${tokens}`, expires_in: 3599, token_type: 'Bearer' });
  };

  it('streams Gemini from publishers/google with a token the signed JWT was exchanged for, asked once', async () => {
    upstream.reply((req) => token(req) ?? sse(geminiStreamBody(GEMINI)));
    const expected = geminiPayloads(GEMINI)
      .flatMap((p) => p.candidates?.[0]?.content?.parts ?? [])
      .map((p: { text?: string }) => p.text ?? '')
      .join('');
    for (let i = 0; i < 2; i++) {
      const got = await collect(
        await gw.client.chat.completions.create({
          model: 'vertex/gemini-2.5-flash',
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'Hi' }],
        }),
      );
      assert.equal(got.content, expected);
    }
    assert.equal(tokens, 1);
    const claims = assertion(upstream.requests.find((r) => r.url === '/token')!);
    assert.equal(claims.iss, 'sluice@proj-1.iam.gserviceaccount.com');
    assert.equal(claims.scope, 'https://www.googleapis.com/auth/cloud-platform');
    for (const call of calls()) {
      assert.equal(call.url, '/v1/projects/proj-1/locations/us-east5/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
      assert.equal(call.headers.authorization, 'Bearer ya29.test-1');
      assert.deepEqual((call.json as { contents: unknown }).contents, [{ role: 'user', parts: [{ text: 'Hi' }] }]);
    }
  });

  it('sends Claude to publishers/anthropic with the model in the URL and vertex-2023-10-16 in the body, priced', async () => {
    upstream.requests.length = 0;
    upstream.reply((req) => token(req) ?? sse(anthropicStreamBody(CLAUDE)));
    const res = await rawStream(gw.url, {
      model: 'vertex/claude-haiku-4-5@20251001',
      stream: true,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    assert.equal(res.status, 200);
    const [call] = calls();
    assert.equal(call.url, '/v1/projects/proj-1/locations/us-east5/publishers/anthropic/models/claude-haiku-4-5@20251001:streamRawPredict');
    const body = call.json as Record<string, unknown>;
    assert.equal(body.anthropic_version, 'vertex-2023-10-16');
    assert.equal(body.model, undefined);
    assert.equal(body.stream, true);
    assert.equal(call.headers['anthropic-version'], undefined);
    const text = anthropicPayloads(CLAUDE)
      .filter((p) => p.type === 'content_block_delta')
      .map((p) => p.delta.text)
      .join('');
    assert.ok(text.length > 0);
    for (const word of text.split(' ').slice(0, 3)) assert.ok(res.text.includes(JSON.stringify(word).slice(1, -1)));

    const record = await requestRecord(gw, res.headers.get('x-request-id')!);
    assert.equal(record.provider, 'vertex');
    assert.equal(record.usage.input_tokens, anthropicPayloads(CLAUDE)[0].message.usage.input_tokens);
    assert.ok(record.cost_usd > 0, 'Claude on Vertex is priced from the registry');
  });

  it('relays /v1/messages to Claude on Vertex, its bytes as they came', async () => {
    upstream.requests.length = 0;
    const body = anthropicStreamBody(CLAUDE);
    upstream.reply((req) => token(req) ?? sse(body));
    const res = await rawStream(
      gw.url,
      { model: 'vertex/claude-haiku-4-5@20251001', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hi' }] },
      { 'anthropic-beta': 'context-1m-2025-08-07' },
      '/v1/messages',
    );
    assert.equal(res.status, 200);
    assert.equal(res.text, body.toString('utf8'));
    const [call] = calls();
    assert.match(call.url, /publishers\/anthropic\/models\/claude-haiku-4-5@20251001:streamRawPredict$/);
    assert.equal((call.json as Record<string, unknown>).anthropic_version, 'vertex-2023-10-16');
    assert.equal((call.json as Record<string, unknown>).model, undefined);
    assert.equal(call.headers['anthropic-beta'], 'context-1m-2025-08-07');
  });

  it('counts tokens with count-tokens:rawPredict, the model in the body', async () => {
    upstream.requests.length = 0;
    upstream.reply((req) => token(req) ?? jsonReply({ input_tokens: 12 }));
    const res = await fetch(`${gw.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'vertex/claude-haiku-4-5@20251001', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    assert.deepEqual(await res.json(), { input_tokens: 12 });
    const [call] = calls();
    assert.equal(call.url, '/v1/projects/proj-1/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict');
    assert.equal((call.json as Record<string, unknown>).model, 'claude-haiku-4-5@20251001');
  });

  it("maps Vertex's Google-shaped quota error and Claude's Anthropic-shaped one", async () => {
    upstream.reply(
      (req) =>
        token(req) ??
        (req.url.includes('publishers/google')
          ? jsonReply({ error: { code: 429, message: 'Quota exceeded for aiplatform.googleapis.com.', status: 'RESOURCE_EXHAUSTED' } }, 429)
          : jsonReply({ type: 'error', error: { type: 'invalid_request_error', message: 'messages: roles must alternate' } }, 400)),
    );
    const fail = (model: string) =>
      gw.client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] }).then(
        () => assert.fail('expected an error'),
        (e: unknown) => e as APIError,
      );
    const quota = await fail('vertex/gemini-2.5-flash');
    assert.equal(quota.status, 429);
    assert.match(quota.message, /Quota exceeded/);
    const invalid = await fail('vertex/claude-haiku-4-5@20251001');
    assert.equal(invalid.status, 400);
    assert.match(invalid.message, /roles must alternate/);
  });
});

describe('vertex: an access token from the environment, the global endpoint', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: { providers: { vertex: { base_url: url } } },
    env: { GOOGLE_CLOUD_PROJECT: 'proj-2', VERTEX_ACCESS_TOKEN: 'ya29.from-env' },
  }));

  it('calls locations/global with the token as it is, asking no token endpoint', async () => {
    upstream.reply(jsonReply({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hello' }] }, finishReason: 'STOP' }] }));
    const answer = await gw.client.chat.completions.create({ model: 'vertex/gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(answer.choices[0].message.content, 'Hello');
    const [call] = upstream.requests;
    assert.equal(upstream.requests.length, 1);
    assert.equal(call.url, '/v1/projects/proj-2/locations/global/publishers/google/models/gemini-2.5-flash:generateContent');
    assert.equal(call.headers.authorization, 'Bearer ya29.from-env');
    assert.ok(!gw.logs.some((line) => line.includes('ya29.from-env')), 'the token is never logged');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../errors/gateway-error.ts';
import type { UpstreamClient, UpstreamRequest, UpstreamResponse, UpstreamUpload } from '../upstream/http-client.ts';
import { createMediaApi, encodeForm } from './media-api.ts';
import { mapOpenAICompatibleError } from './openai-compatible/map-error.ts';

/** An upstream client that records what it is sent and answers `status` with `text`. */
function fakeClient(status: number, text: string): { client: UpstreamClient; sent: (UpstreamRequest | UpstreamUpload)[] } {
  const sent: (UpstreamRequest | UpstreamUpload)[] = [];
  const body = Object.assign([Buffer.from(text)], { destroyed: false, destroy() {} });
  const send = (_provider: string, req: UpstreamRequest | UpstreamUpload) => {
    sent.push(req);
    return Promise.resolve({ statusCode: status, headers: {}, body } as unknown as UpstreamResponse);
  };
  return { client: { send } as unknown as UpstreamClient, sent };
}

const target = {
  // An Azure-style scheme: the model in the URL, the key in its own header.
  urlFor: (path: string, model: string) => `https://res.example/openai/deployments/${model}/${path}?api-version=2025-04-01-preview`,
  headers: () => ({ 'api-key': 'k' }),
  mapError: (status: number, headers: Record<string, string | string[] | undefined>, text: string) =>
    mapOpenAICompatibleError('azure', status, headers, text),
};
const ctx = { signal: new AbortController().signal, requestId: 'r1', traceHeaders: { traceparent: '00-abc-def-01' } };

describe('createMediaApi', () => {
  it("sends JSON under the target's URL for the path and model, with its headers and the upstream model name", async () => {
    const { client, sent } = fakeClient(200, '{}');
    const res = await createMediaApi('azure', client, target).send(
      { path: 'images/generations', body: { json: { prompt: 'a fox', n: 1 } }, accept: 'application/json' },
      'my-dalle',
      ctx,
    );
    assert.equal(res.statusCode, 200);
    assert.equal(sent[0].url, 'https://res.example/openai/deployments/my-dalle/images/generations?api-version=2025-04-01-preview');
    assert.deepEqual(sent[0].headers, {
      'api-key': 'k',
      accept: 'application/json',
      'content-type': 'application/json',
      traceparent: '00-abc-def-01',
    });
    assert.deepEqual(JSON.parse(sent[0].body as string), { prompt: 'a fox', n: 1, model: 'my-dalle' });
  });

  it('sends a form as multipart bytes with its boundary, its files as they came', async () => {
    const { client, sent } = fakeClient(200, '{}');
    const form = new FormData();
    form.append('model', 'whisper');
    form.append('file', new File(['RIFF-audio'], 'a.wav', { type: 'audio/wav' }));
    await createMediaApi('azure', client, target).send(
      { path: 'audio/transcriptions', body: { form }, accept: 'application/json' },
      'whisper-1',
      ctx,
    );
    const contentType = sent[0].headers['content-type'];
    assert.match(contentType, /^multipart\/form-data; boundary=/);
    const back = await new Request('http://x/', { method: 'POST', headers: { 'content-type': contentType }, body: sent[0].body }).formData();
    assert.equal(back.get('model'), 'whisper-1');
    assert.equal(await (back.get('file') as File).text(), 'RIFF-audio');
    // The client's form is not changed: each candidate of a route gets its own model name.
    assert.equal(form.get('model'), 'whisper');
  });

  it("a non-2xx is the provider's error; a model id no upstream takes is a 400 before any call", async () => {
    const { client, sent } = fakeClient(429, '{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}');
    const api = createMediaApi('azure', client, target);
    const call = { path: 'audio/speech' as const, body: { json: { input: 'hi' } }, accept: '*/*' };
    await assert.rejects(api.send(call, 'tts', ctx), (err: unknown) => err instanceof GatewayError && err.status === 429);
    await assert.rejects(api.send(call, 'bad\u0000id', ctx), (err: unknown) => err instanceof GatewayError && err.status === 400);
    assert.equal(sent.length, 1);
  });

  it('asks for the headers on each call, waiting for a token that is made per call', async () => {
    const { client, sent } = fakeClient(200, '{}');
    let tokens = 0;
    const api = createMediaApi('azure', client, {
      ...target,
      headers: async () => ({ authorization: `Bearer token-${++tokens}` }),
    });
    const call = { path: 'images/generations' as const, body: { json: { prompt: 'p' } }, accept: 'application/json' };
    await api.send(call, 'dalle', ctx);
    await api.send(call, 'dalle', ctx);
    assert.deepEqual(
      sent.map((req) => req.headers.authorization),
      ['Bearer token-1', 'Bearer token-2'],
    );
  });
});

describe('encodeForm', () => {
  it('sets the model, appending it when the form has none', async () => {
    const form = new FormData();
    form.append('prompt', 'p');
    const { bytes, contentType } = await encodeForm(form, 'gpt-image-1');
    const back = await new Request('http://x/', { method: 'POST', headers: { 'content-type': contentType }, body: bytes }).formData();
    assert.deepEqual([...back.keys()], ['prompt', 'model']);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { PricingRegistry } from '../../src/accounting/pricing.ts';
import { type RecordedRequest, recordedForm, type UpstreamReply } from '../helpers/fake-upstream.ts';
import { adminCall, projectWithKey } from '../helpers/admin-client.ts';
import { requestRecord, useUpstreamGateway } from '../helpers/gateway.ts';

// The wire shapes of OpenAI's Audio API reference: a transcription's JSON with its `usage`
// (`duration` for whisper-1, `tokens` for gpt-4o-transcribe), the transcript.text.delta / .done
// events of a streamed one, and speech as audio bytes.
const TEXT = 'The quick brown fox jumped over the lazy dog.';
const TOKENS_USAGE = {
  type: 'tokens',
  input_tokens: 14,
  input_token_details: { text_tokens: 0, audio_tokens: 14 },
  output_tokens: 11,
  total_tokens: 25,
};

const json = (body: unknown, status = 200): UpstreamReply => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

const sse = (events: Record<string, unknown>[]) => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('');

/** The model named in a multipart body (the fake answers as that model would). */
const formModel = (req: RecordedRequest) => /name="model"\r\n\r\n([^\r]*)/.exec(req.body)?.[1];

function transcriptionAnswer(req: RecordedRequest): UpstreamReply {
  const model = formModel(req);
  if (req.body.includes('name="stream"\r\n\r\ntrue')) {
    return {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: sse([
        { type: 'transcript.text.delta', delta: 'The quick brown fox', logprobs: [] },
        { type: 'transcript.text.delta', delta: ' jumped over the lazy dog.', logprobs: [] },
        { type: 'transcript.text.done', text: TEXT, logprobs: [], usage: TOKENS_USAGE },
      ]),
      randomSplit: { seed: 3 },
    };
  }
  if (req.body.includes('name="response_format"\r\n\r\ntext')) return { status: 200, headers: { 'content-type': 'text/plain' }, body: `${TEXT}\n` };
  return json({ text: TEXT, usage: model === 'whisper-1' ? { type: 'duration', seconds: 90 } : TOKENS_USAGE });
}

function last(upstream: { requests: RecordedRequest[] }): RecordedRequest {
  const request = upstream.requests.at(-1);
  assert.ok(request, 'the upstream got no request');
  return request;
}

const audioFile = () => toFile(Buffer.from('RIFF....WAVEfmt fake audio'), 'speech.wav', { type: 'audio/wav' });

describe('POST /v1/audio through the openai SDK', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: {
      // The registry prices whisper-1 by the hour of audio and gpt-4o-transcribe by tokens; not tts-1.
      pricing: { 'openai/tts-1': { per_million_characters: 15 } },
      server: { upload_limit_bytes: 4096 },
    },
    env: { OPENAI_API_KEY: 'sk-upstream', OPENAI_BASE_URL: `${url}/v1` },
  }));

  async function record(response: Response) {
    return requestRecord(gw, response.headers.get('x-request-id') ?? '');
  }

  it('transcriptions (whisper-1): the upload relayed with its file, the seconds of audio priced from the registry', async () => {
    upstream.reply(transcriptionAnswer);
    const { data, response } = await gw.client.audio.transcriptions
      .create({
        model: 'openai/whisper-1',
        file: await audioFile(),
        language: 'en',
        timestamp_granularities: ['word', 'segment'],
        response_format: 'verbose_json',
      })
      .withResponse();
    assert.equal(data.text, TEXT);
    const sent = last(upstream);
    assert.equal(sent.url, '/v1/audio/transcriptions');
    assert.equal(sent.headers.authorization, 'Bearer sk-upstream');
    const form = await recordedForm(sent);
    assert.equal(form.get('model'), 'whisper-1');
    assert.equal(form.get('language'), 'en');
    assert.deepEqual(form.getAll('timestamp_granularities[]'), ['word', 'segment']);
    const file = form.get('file') as File;
    assert.deepEqual([file.name, file.type, await file.text()], ['speech.wav', 'audio/wav', 'RIFF....WAVEfmt fake audio']);
    const row = await record(response);
    assert.deepEqual([row.surface, row.streamed, row.outcome, row.usage.estimated], ['audio.transcriptions', false, 'ok', false]);
    // whisper-1: $0.36 an hour of audio in the registry (its $0.006 a minute): 90 s.
    const expected = new PricingRegistry().cost('openai', 'whisper-1', {
      inputTokens: 0,
      outputTokens: 0,
      units: { audioSeconds: 90 },
      source: 'provider',
    });
    assert.deepEqual([expected.priceKnown, expected.costUsd], [true, 0.009]);
    assert.deepEqual([row.price_known, row.cost_usd], [true, 0.009]);
  });

  it('transcriptions (gpt-4o-transcribe): tokens from its usage, audio tokens among the input, priced from the registry', async () => {
    upstream.reply(transcriptionAnswer);
    const { response } = await gw.client.audio.transcriptions.create({ model: 'openai/gpt-4o-transcribe', file: await audioFile() }).withResponse();
    const row = await record(response);
    assert.deepEqual([row.usage.input_tokens, row.usage.output_tokens, row.usage.audio_input_tokens], [14, 11, 14]);
    const expected = new PricingRegistry().cost('openai', 'gpt-4o-transcribe', {
      inputTokens: 14,
      outputTokens: 11,
      audioInputTokens: 14,
      source: 'provider',
    });
    assert.deepEqual([row.price_known, row.cost_usd], [true, expected.costUsd]);
  });

  it('stream: the transcript.text.delta and .done events relayed as SSE, the usage of .done in the ledger', async () => {
    upstream.reply(transcriptionAnswer);
    const { data: stream, response } = await gw.client.audio.transcriptions
      .create({ model: 'openai/gpt-4o-mini-transcribe', file: await audioFile(), stream: true })
      .withResponse();
    const events: { type: string }[] = [];
    for await (const e of stream) events.push(e);
    assert.deepEqual(
      events.map((e) => e.type),
      ['transcript.text.delta', 'transcript.text.delta', 'transcript.text.done'],
    );
    assert.equal(last(upstream).headers.accept, 'text/event-stream');
    const row = await record(response);
    assert.deepEqual(
      [row.surface, row.streamed, row.outcome, row.usage.input_tokens, row.usage.output_tokens],
      ['audio.transcriptions', true, 'ok', 14, 11],
    );
    assert.equal(row.price_known, true);
  });

  it('a server that ignores `stream` and answers JSON: the answer relayed as it came, its usage recorded', async () => {
    upstream.reply(json({ text: TEXT, usage: TOKENS_USAGE }));
    const form = new FormData();
    form.append('model', 'openai/gpt-4o-transcribe');
    form.append('file', new File(['fake audio'], 'a.wav', { type: 'audio/wav' }));
    form.append('stream', 'true');
    const res = await fetch(`${gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: 'Bearer x' }, body: form });
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(((await res.json()) as { text: string }).text, TEXT);
    const row = await record(res);
    assert.deepEqual([row.outcome, row.usage.input_tokens, row.usage.output_tokens], ['ok', 14, 11]);
  });

  it('a transcript as text is relayed as text; whisper-1 then reports no duration, so its price is not known', async () => {
    upstream.reply(transcriptionAnswer);
    const res = await gw.client.audio.transcriptions
      .create({ model: 'openai/whisper-1', file: await audioFile(), response_format: 'text' })
      .asResponse();
    assert.equal(await res.text(), `${TEXT}\n`);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const row = await record(res);
    assert.deepEqual([row.outcome, row.price_known, row.cost_usd, row.usage.estimated], ['ok', false, 0, true]);
    assert.ok(row.usage.output_tokens > 0, 'the transcript is counted as the output');
  });

  it('translations: the same upload relayed to /audio/translations, its own ledger surface', async () => {
    upstream.reply(transcriptionAnswer);
    const { data, response } = await gw.client.audio.translations.create({ model: 'openai/whisper-1', file: await audioFile() }).withResponse();
    assert.equal(data.text, TEXT);
    assert.equal(last(upstream).url, '/v1/audio/translations');
    const row = await record(response);
    assert.deepEqual([row.surface, row.cost_usd], ['audio.translations', 0.009]);
  });

  it("an upload past server.upload_limit_bytes is a 413 in OpenAI's shape, with a ledger row", async () => {
    upstream.reply(transcriptionAnswer);
    const before = upstream.requests.length;
    const big = await toFile(Buffer.alloc(8192, 1), 'long.wav', { type: 'audio/wav' });
    let id = '';
    await assert.rejects(gw.client.audio.transcriptions.create({ model: 'openai/whisper-1', file: big }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.APIError, String(err));
      assert.equal(err.status, 413);
      assert.deepEqual([err.type, err.code], ['invalid_request_error', 'request_too_large']);
      assert.match(err.message, /exceeds the limit of 4096 bytes/);
      id = err.headers?.get('x-request-id') ?? '';
      return true;
    });
    assert.equal(upstream.requests.length, before);
    const row = await requestRecord(gw, id);
    assert.deepEqual([row.surface, row.outcome, row.error.code], ['audio.transcriptions', 'error', 'request_too_large']);
  });

  it('bad uploads: a 4xx naming the field, before any upstream call', async () => {
    upstream.reply(transcriptionAnswer);
    const before = upstream.requests.length;
    const post = (body: FormData | string, headers: Record<string, string> = { authorization: 'Bearer x' }, path = 'transcriptions') =>
      fetch(`${gw.url}/v1/audio/${path}`, { method: 'POST', headers, body });
    const form = (fields: Record<string, string | Blob>) => {
      const f = new FormData();
      for (const [name, value] of Object.entries(fields)) f.append(name, value);
      return f;
    };
    const file = new File(['fake audio'], 'a.wav', { type: 'audio/wav' });
    const cases: [Promise<Response>, number, string | null][] = [
      [post(form({ model: 'openai/whisper-1' })), 400, 'file'],
      [post(form({ file })), 400, 'model'],
      [post(form({ model: 'openai/whisper-1', file: 'not a file' })), 400, 'file'],
      [post(form({ model: 'openai/whisper-1', file, response_format: 'mp3' })), 400, 'response_format'],
      [post(form({ model: 'openai/whisper-1', file, stream: 'yes' })), 400, 'stream'],
      [post(form({ model: 'openai/whisper-1', file, stream: 'true' }), undefined, 'translations'), 400, 'stream'],
      [post(form({ model: 'mock/echo', file })), 400, 'model'],
      [post(JSON.stringify({ model: 'openai/whisper-1' }), { authorization: 'Bearer x', 'content-type': 'application/json' }), 415, null],
      // A form without credentials in a header: what a web page could send cross-site without a preflight.
      [post(form({ model: 'openai/whisper-1', file }), {}), 400, null],
    ];
    for (const [answer, status, param] of cases) {
      const res = await answer;
      const body = (await res.json()) as { error: { param: string | null; type: string; message: string } };
      assert.equal(res.status, status, body.error.message);
      assert.deepEqual([body.error.param, body.error.type], [param, 'invalid_request_error'], body.error.message);
    }
    assert.equal(upstream.requests.length, before, 'nothing reached the upstream');
  });

  it('speech: the audio reaches the client as it arrives, before the upstream has finished; tts-1 priced by its characters', async () => {
    let lastPieceSentAt = 0;
    upstream.reply(() => {
      // The second half is sent a second after the first.
      setTimeout(() => (lastPieceSentAt = Date.now()), 1000);
      return { status: 200, headers: { 'content-type': 'audio/mpeg' }, pieces: ['ID3-first-frames', '-last-frames'], delaysMs: [0, 1000] };
    });
    const res = await gw.client.audio.speech.create({ model: 'openai/tts-1', voice: 'alloy', input: 'Hello world, héllo! 👋' }).asResponse();
    assert.equal(res.headers.get('content-type'), 'audio/mpeg');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    const firstAt = Date.now();
    assert.equal(Buffer.from(first.value ?? []).toString(), 'ID3-first-frames');
    assert.ok(lastPieceSentAt === 0, 'the first bytes reached the client before the upstream sent its last ones');
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString();
    assert.equal(rest, '-last-frames');
    assert.ok(lastPieceSentAt >= firstAt - 50);
    assert.deepEqual(last(upstream).json, { model: 'tts-1', voice: 'alloy', input: 'Hello world, héllo! 👋' });
    assert.equal(last(upstream).headers.accept, '*/*');
    const row = await record(res);
    assert.deepEqual([row.surface, row.streamed, row.outcome], ['audio.speech', false, 'ok']);
    // 21 characters (the emoji is one) at $15 a million.
    assert.deepEqual([row.price_known, row.cost_usd], [true, (21 * 15) / 1_000_000]);
  });

  it('speech as SSE (stream_format: "sse"): the events relayed, the tokens of speech.audio.done priced', async () => {
    upstream.reply({
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: sse([
        { type: 'speech.audio.delta', audio: Buffer.from('pcm').toString('base64') },
        { type: 'speech.audio.done', usage: { input_tokens: 9, output_tokens: 120, total_tokens: 129 } },
      ]),
    });
    const res = await gw.client.audio.speech
      .create({ model: 'openai/gpt-4o-mini-tts', voice: 'coral', input: 'Hello', stream_format: 'sse' })
      .asResponse();
    const text = await res.text();
    assert.match(text, /"type":"speech\.audio\.delta"/);
    assert.match(text, /"type":"speech\.audio\.done"/);
    const row = await record(res);
    assert.deepEqual([row.streamed, row.usage.input_tokens, row.usage.output_tokens, row.usage.estimated], [true, 9, 120, false]);
    const expected = new PricingRegistry().cost('openai', 'gpt-4o-mini-tts', { inputTokens: 9, outputTokens: 120, source: 'provider' });
    assert.deepEqual([row.price_known, row.cost_usd], [true, expected.costUsd]);
  });

  it("an upstream error on speech is the client's error in OpenAI's shape, and the row's", async () => {
    upstream.reply(json({ error: { message: 'Invalid voice.', type: 'invalid_request_error', param: 'voice', code: null } }, 400));
    let id = '';
    await assert.rejects(gw.client.audio.speech.create({ model: 'openai/tts-1', voice: 'nobody', input: 'Hi' }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.BadRequestError, String(err));
      assert.match(err.message, /Invalid voice/);
      assert.equal((err.error as { param?: string }).param, 'voice');
      id = err.headers.get('x-request-id') ?? '';
      return true;
    });
    const row = await requestRecord(gw, id);
    assert.deepEqual([row.surface, row.outcome, row.upstream_status, row.cost_usd], ['audio.speech', 'error', 400, 0]);
  });
});

describe("POST /v1/audio under a project's endpoint", () => {
  const MASTER = 'sk-master-audio';
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: { auth: { master_key: MASTER }, ledger: { flush_interval_ms: 10 } },
    env: { OPENAI_API_KEY: 'sk-upstream', OPENAI_BASE_URL: `${url}/v1` },
  }));

  it("an upload with no model means the endpoint's model; the key is checked and the row is the project's", async () => {
    upstream.reply(transcriptionAnswer);
    const key = await projectWithKey(gw.url, MASTER, 'proj_audio');
    const created = await adminCall(gw.url, MASTER, 'POST', '/admin/endpoints', { project: 'proj_audio', name: 'notes', model: 'openai/whisper-1' });
    assert.equal(created.status, 201, created.text);
    const form = new FormData();
    form.append('file', new File(['fake audio'], 'a.wav', { type: 'audio/wav' }));
    const post = (apiKey: string) =>
      fetch(`${gw.url}/proj_audio/notes/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` }, body: form });
    assert.equal((await post('sk-wrong')).status, 401);
    const res = await post(key.key as string);
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(((await res.json()) as { text: string }).text, TEXT);
    assert.equal((await recordedForm(last(upstream))).get('model'), 'whisper-1');
    const row = (await adminCall(gw.url, MASTER, 'GET', `/v1/requests/${res.headers.get('x-request-id')}`)).body;
    assert.deepEqual([row.project_id, row.surface, row.cost_usd], ['proj_audio', 'audio.transcriptions', 0.009]);
  });
});

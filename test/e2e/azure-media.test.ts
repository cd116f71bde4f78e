import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI, { toFile } from 'openai';
import { batchCost } from '../../src/accounting/batch-cost.ts';
import { PricingRegistry } from '../../src/accounting/pricing.ts';
import { adminCall } from '../helpers/admin-client.ts';
import { BatchUpstream } from '../helpers/batch-upstream.ts';
import { azureEntraEntry } from '../helpers/azure-entry.ts';
import { type FakeUpstream, type RecordedRequest, recordedForm, startFakeUpstream, type UpstreamReply } from '../helpers/fake-upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

// Azure OpenAI's images, audio, and Files and Batch API, as its REST references show them: the
// deployments API (`/openai/deployments/{deployment}/images/generations?api-version=…`, files and
// batches at `/openai/files?api-version=…`) with an `api-key`, and the v1 API (`/openai/v1/…`, no
// api-version) with a Microsoft Entra ID bearer token. The bodies and answers are OpenAI's.
const MASTER = 'sk-master-azure-media';
const VERSION = '2024-10-21';
const PNG = Buffer.from('a tiny png').toString('base64');
const TEXT = 'The quick brown fox jumped over the lazy dog.';
const BATCH_MODEL = 'gpt-4o-2024-08-06';

const json = (body: unknown, status = 200, headers: Record<string, string> = {}): UpstreamReply => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/** How one test resource is called: where its operations live, and the credential it takes. */
interface Style {
  title: string;
  provider: string;
  /** The prefix of every operation: `/openai` (deployments API) or `/openai/v1`. */
  root: string;
  /** The api-version every call must carry; none on the v1 API. */
  apiVersion?: string;
  /** The credential header Azure checks, and its value. */
  auth: [string, string];
  entry: (url: string) => Record<string, unknown>;
}

const deployments = { 'gpt-image-1': 'img-prod', 'whisper-1': 'whisper-prod', 'tts-1': 'tts-prod', 'gpt-4o': 'gpt4o-batch' };

const STYLES: Style[] = [
  {
    title: 'the deployments API with an api-key',
    provider: 'azure',
    root: '/openai',
    apiVersion: VERSION,
    auth: ['api-key', 'az-key'],
    entry: (url) => ({ base_url: url, api_key: 'az-key', deployments }),
  },
  {
    title: 'the v1 API with Microsoft Entra ID',
    provider: 'azure-eu',
    root: '/openai/v1',
    auth: ['authorization', 'Bearer entra-token-1'],
    entry: (url) => azureEntraEntry(url, deployments),
  },
];

/** The path of a call on this style: a deployment's operation sits under the deployment on the deployments API only. */
const pathOf = (style: Style, operation: string, deployment?: string) =>
  style.apiVersion && deployment ? `${style.root}/deployments/${deployment}/${operation}` : `${style.root}/${operation}`;

/**
 * A fake Azure OpenAI resource: Entra's token endpoint, then every call refused as Azure refuses
 * it without the credential (401) or at a path or api-version it has no operation for (404);
 * files and batches are the BatchUpstream's, `answer` serves the rest.
 */
function azureResource(style: Style, batches: BatchUpstream, answer: (req: RecordedRequest, path: string) => UpstreamReply | undefined) {
  let tokens = 0;
  const handler = (req: RecordedRequest): UpstreamReply => {
    const url = new URL(req.url, 'http://resource');
    if (url.pathname.endsWith('/oauth2/v2.0/token')) {
      tokens++;
      return json({ token_type: 'Bearer', expires_in: 3599, access_token: `entra-token-${tokens}` });
    }
    const [header, value] = style.auth;
    if (req.headers[header] !== value)
      return json({ error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint.' } }, 401);
    if (url.searchParams.get('api-version') !== (style.apiVersion ?? null) || !url.pathname.startsWith(`${style.root}/`))
      return json({ error: { code: '404', message: 'Resource not found' } }, 404);
    const path = url.pathname.slice(style.root.length);
    if (path.startsWith('/files') || path.startsWith('/batches')) return batches.reply({ ...req, url: `/v1${path}${url.search}` });
    return answer(req, path) ?? json({ error: { code: '404', message: 'Resource not found' } }, 404);
  };
  return { handler, tokens: () => tokens };
}

const inputJsonl = [1, 2]
  .map((i) =>
    JSON.stringify({
      custom_id: `task-${i}`,
      method: 'POST',
      url: '/chat/completions',
      body: { model: 'gpt4o-batch', messages: [{ role: 'user', content: 'Hi' }] },
    }),
  )
  .join('\n');

for (const style of STYLES) {
  describe(`azure media and batches: ${style.title}`, () => {
    let upstream: FakeUpstream;
    let gw: TestGateway;
    const batches = new BatchUpstream();
    let speechPieces: () => UpstreamReply = () => json({});
    let failNext: UpstreamReply | undefined;
    const resource = azureResource(style, batches, (req, path) => {
      if (failNext) {
        const reply = failNext;
        failNext = undefined;
        return reply;
      }
      if (path === pathOf(style, 'images/generations', 'img-prod').slice(style.root.length))
        return json({ created: 1_764_000_000, data: [{ b64_json: PNG }] });
      if (path === pathOf(style, 'audio/transcriptions', 'whisper-prod').slice(style.root.length))
        return json({ text: TEXT, usage: { type: 'duration', seconds: 12 } });
      if (path === pathOf(style, 'audio/speech', 'tts-prod').slice(style.root.length)) return speechPieces();
      return undefined;
    });
    const model = (name: string) => `${style.provider}/${name}`;
    const last = () => {
      const request = upstream.requests.at(-1);
      assert.ok(request, 'the upstream got no request');
      return request;
    };
    /** The ledger row of a request (the gateway keeps its request log to the master key). */
    const requestRecord = async (id: string) => {
      const answer = await adminCall(gw.url, MASTER, 'GET', `/v1/requests/${id}`);
      assert.equal(answer.status, 200, answer.text);
      return answer.body;
    };
    /** The URL the resource must have been called at for this operation. */
    const expectedUrl = (operation: string, deployment?: string) =>
      `${pathOf(style, operation, deployment)}${style.apiVersion ? `?api-version=${style.apiVersion}` : ''}`;

    before(async () => {
      upstream = await startFakeUpstream();
      upstream.reply(resource.handler);
      gw = await startGateway({ providers: { [style.provider]: style.entry(upstream.url) }, auth: { master_key: MASTER } });
    });
    after(async () => {
      await gw?.close();
      await upstream?.close();
      if (style.apiVersion === undefined) {
        assert.equal(resource.tokens(), 1, 'one Entra token serves every call');
        assert.ok(!gw.logs.some((line) => line.includes('entra-secret') || line.includes('entra-token-1')), 'neither secret nor token is logged');
      }
    });

    it("generates an image at the model's deployment, the deployment as the body's model", async () => {
      const { data, response } = await gw.client.images.generate({ model: model('gpt-image-1'), prompt: 'a red fox', n: 1 }).withResponse();
      assert.equal(data.data?.[0].b64_json, PNG);
      assert.equal(last().url, expectedUrl('images/generations', 'img-prod'));
      assert.deepEqual(last().json, { model: 'img-prod', prompt: 'a red fox', n: 1 });
      const row = await requestRecord(response.headers.get('x-request-id') ?? '');
      assert.deepEqual([row.provider, row.model, row.surface, row.outcome], [style.provider, 'gpt-image-1', 'images', 'ok']);
    });

    it('relays a transcription as the multipart upload it came as, its file intact', async () => {
      const file = await toFile(Buffer.from('RIFF....WAVEfmt fake audio'), 'speech.wav', { type: 'audio/wav' });
      const answer = await gw.client.audio.transcriptions.create({ model: model('whisper-1'), file, language: 'en' });
      assert.equal(answer.text, TEXT);
      assert.equal(last().url, expectedUrl('audio/transcriptions', 'whisper-prod'));
      const form = await recordedForm(last());
      assert.equal(form.get('model'), 'whisper-prod');
      assert.equal(form.get('language'), 'en');
      const sent = form.get('file') as File;
      assert.deepEqual([sent.name, await sent.text()], ['speech.wav', 'RIFF....WAVEfmt fake audio']);
    });

    it('streams speech through: the first audio reaches the client before Azure sends the rest', async () => {
      let lastPieceSent = false;
      speechPieces = () => {
        setTimeout(() => (lastPieceSent = true), 500);
        return { status: 200, headers: { 'content-type': 'audio/mpeg' }, pieces: ['ID3-first', '-last'], delaysMs: [0, 500] };
      };
      const res = await gw.client.audio.speech.create({ model: model('tts-1'), voice: 'alloy', input: 'Hello' }).asResponse();
      assert.equal(res.headers.get('content-type'), 'audio/mpeg');
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const first = await reader.read();
      assert.equal(Buffer.from(first.value ?? []).toString(), 'ID3-first');
      assert.equal(lastPieceSent, false, 'the first bytes arrived before Azure sent its last ones');
      let rest = '';
      for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString();
      assert.equal(rest, '-last');
      assert.equal(last().url, expectedUrl('audio/speech', 'tts-prod'));
      assert.deepEqual(last().json, { model: 'tts-prod', voice: 'alloy', input: 'Hello' });
    });

    it("answers Azure's 400 and 429 as OpenAI's errors, with the row's status", async () => {
      failNext = json(
        { error: { code: 'invalid_size', message: "The size '12x12' is not supported.", param: 'size', type: 'invalid_request_error' } },
        400,
      );
      const bad = await gw.client.images.generate({ model: model('gpt-image-1'), prompt: 'x' }).catch((e: unknown) => e);
      assert.ok(bad instanceof OpenAI.BadRequestError, String(bad));
      assert.equal(bad.param, 'size');
      assert.match(bad.message, /12x12/);

      failNext = json(
        { error: { code: '429', message: 'Requests to the Audio API have exceeded call rate limit. Please retry after 7 seconds.' } },
        429,
        { 'retry-after': '7' },
      );
      const file = await toFile(Buffer.from('RIFF'), 'a.wav', { type: 'audio/wav' });
      const limited = await gw.client.audio.transcriptions
        .create({ model: model('whisper-1'), file })
        .withResponse()
        .catch((e: unknown) => e);
      assert.ok(limited instanceof OpenAI.RateLimitError, String(limited));
      assert.match(limited.message, /exceeded call rate limit/);
      const row = await requestRecord(limited.headers.get('x-request-id') ?? '');
      assert.deepEqual([row.provider, row.outcome, row.upstream_status], [style.provider, 'error', 429]);
    });

    it('uploads a batch file, creates and retrieves the batch at the resource, and settles it at the azure prices', async () => {
      const file = await gw.client.files.create({ file: await toFile(Buffer.from(inputJsonl), 'input.jsonl'), purpose: 'batch' });
      assert.equal(last().url, expectedUrl('files'));
      assert.equal(batches.files.get(file.id)?.content, inputJsonl, 'the JSONL reached Azure as written, deployments and all');

      const batch = await gw.client.batches.create({ input_file_id: file.id, endpoint: '/chat/completions' as never, completion_window: '24h' });
      assert.equal(last().url, expectedUrl('batches'));
      assert.deepEqual(last().json, { input_file_id: file.id, endpoint: '/chat/completions', completion_window: '24h' });

      const page = await gw.client.batches.list({ limit: 5 });
      assert.ok(page.data.some((b) => b.id === batch.id));
      assert.equal(last().url, `${pathOf(style, 'batches')}?${style.apiVersion ? `api-version=${style.apiVersion}&` : ''}limit=5`);

      batches.completeBatch(batch.id, [
        { model: BATCH_MODEL, prompt: 1000, completion: 500 },
        { model: BATCH_MODEL, prompt: 3000, completion: 1500 },
      ]);
      const done = await gw.client.batches.retrieve(batch.id);
      assert.equal(done.status, 'completed');
      assert.equal(upstream.requests.at(-2)?.url, expectedUrl(`batches/${batch.id}`));
      assert.equal(last().url, expectedUrl(`files/${done.output_file_id}/content`), 'the output file is read to settle the batch');

      const requests = await adminCall(gw.url, MASTER, 'GET', '/v1/requests?limit=200');
      const rows = (requests.body.data as Record<string, any>[]).filter(
        (r) => r.finish_reason === 'batch_settled' && r.upstream_request_id === batch.id,
      );
      assert.equal(rows.length, 1);
      const [row] = rows;
      assert.deepEqual([row.provider, row.model, row.usage.input_tokens, row.usage.output_tokens], [style.provider, BATCH_MODEL, 4000, 2000]);
      // Azure's own price list (a `type: azure` entry is priced as azure), at the batch discount.
      const usage = { inputTokens: 4000, outputTokens: 2000, source: 'provider' as const };
      const expected = batchCost(new PricingRegistry(), 'azure', BATCH_MODEL, usage, 0.5);
      assert.equal(expected.priceKnown, true, `the registry prices azure/${BATCH_MODEL}`);
      assert.deepEqual([row.price_known, row.cost_usd], [true, expected.costUsd]);
    });
  });
}

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { adminCall, projectWithKey } from '../helpers/admin-client.ts';
import { BatchUpstream } from '../helpers/batch-upstream.ts';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { createTestSchema, noPostgres, type TestSchema } from '../helpers/postgres.ts';

const MASTER = 'sk-master-batches';
const OPENAI_MODEL = 'gpt-4o-mini';
const ANTHROPIC_MODEL = 'claude-haiku-4-5';

/** Both providers at the fake, priced in the config so the expected costs are plain arithmetic. */
function gatewayConfig(upstreamUrl: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    providers: {
      openai: { base_url: `${upstreamUrl}/v1`, api_key: 'sk-upstream-openai' },
      anthropic: { base_url: upstreamUrl, api_key: 'sk-ant-upstream' },
    },
    pricing: {
      [`openai/${OPENAI_MODEL}`]: { input_mtok: 1, output_mtok: 2 },
      [`anthropic/${ANTHROPIC_MODEL}`]: { input_mtok: 1, output_mtok: 5 },
    },
    auth: { master_key: MASTER, key_pepper: 'batches-pepper' },
    batches: { poll_interval_s: 0 },
    ...extra,
  };
}

const inputJsonl = (model: string) =>
  [1, 2]
    .map((i) =>
      JSON.stringify({
        custom_id: `request-${i}`,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model, messages: [{ role: 'user', content: 'Hi' }] },
      }),
    )
    .join('\n');

const openai = (gw: TestGateway, key: string) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
const anthropic = (gw: TestGateway, key: string) => new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });

/** The ledger's settlement rows of one batch (their upstream request id is the batch's id). */
async function settlementRows(gw: TestGateway, batchId: string): Promise<Record<string, any>[]> {
  const page = await adminCall(gw.url, MASTER, 'GET', '/v1/requests?limit=200');
  assert.equal(page.status, 200, page.text);
  return (page.body.data as Record<string, any>[]).filter((r) => r.finish_reason === 'batch_settled' && r.upstream_request_id === batchId);
}

async function upload(client: OpenAI, model = OPENAI_MODEL) {
  return client.files.create({ file: await toFile(Buffer.from(inputJsonl(model)), 'input.jsonl'), purpose: 'batch' });
}

/** A fake of both batch APIs and a gateway on it, with a key of project team-a and one of team-b. */
function useBatchGateway(extra: Record<string, unknown>) {
  const suite = {
    upstream: undefined as unknown as FakeUpstream,
    fake: new BatchUpstream(),
    gw: undefined as unknown as TestGateway,
    keys: { a: '', b: '' },
  };
  before(async () => {
    suite.upstream = await startFakeUpstream();
    suite.upstream.reply(suite.fake.reply);
    suite.gw = await startGateway(gatewayConfig(suite.upstream.url, extra));
    suite.keys.a = (await projectWithKey(suite.gw.url, MASTER, 'team-a')).key;
    suite.keys.b = (await projectWithKey(suite.gw.url, MASTER, 'team-b')).key;
  });
  after(async () => {
    await suite.gw?.close();
    await suite.upstream?.close();
  });
  return suite;
}

describe('the Files and Batch API relayed to an OpenAI-compatible provider (openai SDK)', () => {
  const suite = useBatchGateway({ tiers: { capped: { budgets: [{ period: 'day', limit_usd: 0.003 }] } } });

  it("a settled batch's cost is spent from its key's budget, and a spent budget refuses the next upload", async () => {
    const client = openai(suite.gw, (await projectWithKey(suite.gw.url, MASTER, 'team-c', { tier: 'capped' })).key);
    const file = await upload(client);
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    suite.fake.completeBatch(batch.id, [{ model: OPENAI_MODEL, prompt: 4000, completion: 2000 }]);
    await client.batches.retrieve(batch.id);
    assert.equal((await settlementRows(suite.gw, batch.id))[0]?.cost_usd, 0.004, 'past the $0.003 budget');
    // At once: the settlement added its cost to the budget's book, not only to the store.
    const refused = await upload(client).catch((e: unknown) => e);
    assert.ok(refused instanceof OpenAI.RateLimitError, String(refused));
    assert.equal(refused.code, 'insufficient_quota');
  });

  it('upload, batch, completion, output: the batch is settled once at half the price, and each request is a row', async () => {
    const client = openai(suite.gw, suite.keys.a);
    const file = await upload(client);
    assert.match(file.id, /^file-/);
    assert.equal(suite.fake.files.get(file.id)?.content, inputJsonl(OPENAI_MODEL), 'the upload reached the upstream byte for byte');
    const sent = suite.upstream.requests.at(-1);
    assert.equal(sent?.headers.authorization, 'Bearer sk-upstream-openai', 'the operator key goes upstream, not the client key');
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    assert.equal(batch.status, 'validating');
    assert.deepEqual(await settlementRows(suite.gw, batch.id), [], 'nothing is settled before the batch ends');

    const outputId = suite.fake.completeBatch(batch.id, [
      { model: OPENAI_MODEL, prompt: 1000, completion: 500, cached: 200 },
      { model: OPENAI_MODEL, prompt: 3000, completion: 1500 },
    ]);
    const done = await client.batches.retrieve(batch.id);
    assert.equal(done.status, 'completed');
    assert.equal(done.output_file_id, outputId);
    const output = await (await client.files.content(outputId)).text();
    assert.equal(output.trim().split('\n').length, 2);
    await client.batches.retrieve(batch.id);

    const rows = await settlementRows(suite.gw, batch.id);
    assert.equal(rows.length, 1, 'settled exactly once, however often the batch is read');
    const [row] = rows;
    assert.equal(row.surface, 'batches');
    assert.equal(row.provider, 'openai');
    assert.equal(row.model, OPENAI_MODEL);
    assert.equal(row.project_id, 'team-a');
    assert.deepEqual([row.usage.input_tokens, row.usage.output_tokens, row.usage.cached_input_tokens], [4000, 2000, 200]);
    // $1 and $2 per million tokens, halved: (4000 * 1 + 2000 * 2) / 1e6 / 2.
    assert.equal(row.cost_usd, 0.004);
    assert.equal(row.price_known, true);

    const created = await adminCall(suite.gw.url, MASTER, 'GET', `/v1/requests?project_id=team-a&limit=200`);
    const operations = (created.body.data as Record<string, any>[]).map((r) => r.model);
    for (const op of ['files.create', 'batches.create', 'batches.retrieve', 'files.content']) assert.ok(operations.includes(op), op);
  });

  it("another project's file and batch are the 404 of an unknown id, and its lists leave them out", async () => {
    const file = await upload(openai(suite.gw, suite.keys.a));
    const batch = await openai(suite.gw, suite.keys.a).batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const sent = suite.upstream.requests.length;
    const b = openai(suite.gw, suite.keys.b);
    for (const [foreign, unknown] of [
      [() => b.files.retrieve(file.id), () => b.files.retrieve('file-nobody')],
      [() => b.files.content(file.id), () => b.files.content('file-nobody')],
      [() => b.files.delete(file.id), () => b.files.delete('file-nobody')],
      [() => b.batches.retrieve(batch.id), () => b.batches.retrieve('batch_nobody')],
      [() => b.batches.cancel(batch.id), () => b.batches.cancel('batch_nobody')],
      [
        () => b.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
        () => b.batches.create({ input_file_id: 'file-nobody', endpoint: '/v1/chat/completions', completion_window: '24h' }),
      ],
    ] as const) {
      const [x, y] = await Promise.all([
        (foreign as () => Promise<unknown>)().catch((e: unknown) => e),
        (unknown as () => Promise<unknown>)().catch((e: unknown) => e),
      ]);
      assert.ok(x instanceof OpenAI.NotFoundError, String(x));
      assert.ok(y instanceof OpenAI.NotFoundError, String(y));
      assert.equal(x.code, y.code);
      assert.match(String(x.code), /^(file|batch)_not_found$/);
    }
    assert.equal(suite.upstream.requests.length, sent, "nothing of another project's went suite.upstream");
    const files = await b.files.list();
    assert.ok(!files.data.some((f) => f.id === file.id));
    const batches = await b.batches.list();
    assert.ok(!batches.data.some((x) => x.id === batch.id));
    assert.ok((await openai(suite.gw, suite.keys.a).batches.list()).data.some((x) => x.id === batch.id));
    assert.ok(
      (await openai(suite.gw, MASTER).files.list()).data.some((f) => f.id === file.id),
      'the master key lists every project',
    );
  });

  it('delete: the file is gone upstream and here', async () => {
    const client = openai(suite.gw, suite.keys.a);
    const file = await upload(client);
    const deleted = await client.files.delete(file.id);
    assert.deepEqual(deleted, { id: file.id, object: 'file', deleted: true });
    assert.equal(suite.fake.files.has(file.id), false);
    await assert.rejects(client.files.retrieve(file.id), OpenAI.NotFoundError);
  });

  it("the upstream's errors come back in OpenAI's shape, with what the upstream said", async () => {
    const client = openai(suite.gw, suite.keys.a);
    const file = await upload(client);
    suite.fake.files.delete(file.id);
    const res = await fetch(`${suite.gw.url}/v1/files/${file.id}`, { headers: { authorization: `Bearer ${suite.keys.a}` } });
    assert.equal(res.status, 404);
    const body = (await res.json()) as { error: Record<string, any> };
    assert.equal(body.error.upstream.status, 404);
    assert.equal(body.error.upstream.type, 'invalid_request_error');
    assert.match(body.error.message, /No such File object/);
  });

  it("a key's model list holds for the models its batch's input file names", async () => {
    const limited = (await projectWithKey(suite.gw.url, MASTER, 'team-a', { models: ['openai/gpt-4o'] })).key;
    const client = openai(suite.gw, limited);
    const file = await upload(client);
    const refused = await client.batches
      .create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
      .catch((e: unknown) => e);
    assert.ok(refused instanceof OpenAI.PermissionDeniedError, String(refused));
    assert.equal(refused.code, 'model_not_allowed');
    const allowed = await upload(client, 'gpt-4o');
    const batch = await client.batches.create({ input_file_id: allowed.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    assert.match(batch.id, /^batch_/);
  });

  it("bad input is a 400 in the surface's shape naming the field, recorded, and reaches no upstream", async () => {
    const sent = suite.upstream.requests.length;
    const post = (path: string, body: string) =>
      fetch(`${suite.gw.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${suite.keys.a}`, 'content-type': 'application/json' },
        body,
      });
    const noFile = await post('/v1/batches', JSON.stringify({ endpoint: '/v1/chat/completions', completion_window: '24h' }));
    assert.equal(noFile.status, 400);
    assert.equal(((await noFile.json()) as { error: { param: string } }).error.param, 'input_file_id');
    const notJson = await post('/v1/batches', '{');
    assert.equal(notJson.status, 400);
    const noRequests = await post('/v1/messages/batches', JSON.stringify({ requests: [] }));
    assert.equal(noRequests.status, 400);
    const anthropicShape = (await noRequests.json()) as { type: string; error: { type: string; message: string } };
    assert.deepEqual([anthropicShape.type, anthropicShape.error.type], ['error', 'invalid_request_error']);
    assert.match(anthropicShape.error.message, /requests/);
    const unknownQuery = await fetch(`${suite.gw.url}/v1/files?colour=red`, { headers: { authorization: `Bearer ${suite.keys.a}` } });
    assert.equal(unknownQuery.status, 400);
    assert.equal(suite.upstream.requests.length, sent);
    const refused = await post('/v1/batches', '{}');
    const row = await adminCall(suite.gw.url, MASTER, 'GET', `/v1/requests/${refused.headers.get('x-request-id')}`);
    assert.deepEqual(
      [row.body.surface, row.body.model, row.body.outcome, row.body.error.code],
      ['batches', 'batches.create', 'error', 'invalid_request'],
    );
  });

  it('a multipart upload is required, and a provider that serves no Files API is refused naming the header', async () => {
    const json = await fetch(`${suite.gw.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${suite.keys.a}`, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(json.status, 400);
    assert.equal(((await json.json()) as { error: { param: string } }).error.param, 'file');
    const named = await fetch(`${suite.gw.url}/v1/files`, { headers: { authorization: `Bearer ${suite.keys.a}`, 'x-sluice-provider': 'anthropic' } });
    assert.equal(named.status, 400);
    const error = ((await named.json()) as { error: Record<string, string> }).error;
    assert.deepEqual([error.code, error.param], ['batches_unavailable', 'X-Sluice-Provider']);
  });
});

describe("Anthropic's Message Batches relayed (@anthropic-ai/sdk)", () => {
  const suite = useBatchGateway({});

  const requests = (model = ANTHROPIC_MODEL) =>
    [1, 2].map((i) => ({ custom_id: `request-${i}`, params: { model, max_tokens: 64, messages: [{ role: 'user' as const, content: 'Hi' }] } }));

  it('create, end, results: settled once at half the price; another project gets 404; delete', async () => {
    const client = anthropic(suite.gw, suite.keys.a);
    const batch = await client.messages.batches.create({ requests: requests() });
    assert.equal(batch.processing_status, 'in_progress');
    assert.equal(suite.upstream.requests.at(-1)?.headers['x-api-key'], 'sk-ant-upstream');
    suite.fake.endMessageBatch(batch.id, [
      { model: ANTHROPIC_MODEL, input: 1000, output: 100, cacheRead: 500 },
      { model: ANTHROPIC_MODEL, input: 2000, output: 300 },
    ]);
    const ended = await client.messages.batches.retrieve(batch.id);
    assert.equal(ended.processing_status, 'ended');
    assert.equal(ended.results_url, `/v1/messages/batches/${batch.id}/results`, 'the results are read through the gateway');
    const results = [];
    for await (const line of await client.messages.batches.results(batch.id)) results.push(line);
    assert.deepEqual(
      results.map((r) => r.result.type),
      ['succeeded', 'succeeded'],
    );

    const rows = await settlementRows(suite.gw, batch.id);
    assert.equal(rows.length, 1);
    const [row] = rows;
    assert.deepEqual([row.provider, row.model, row.project_id], ['anthropic', ANTHROPIC_MODEL, 'team-a']);
    // Anthropic's input_tokens exclude cache reads: 3000 + 500 read, 400 out.
    assert.deepEqual([row.usage.input_tokens, row.usage.cached_input_tokens, row.usage.output_tokens], [3500, 500, 400]);
    // $1 in, $5 out per million (cache reads at the input price here), halved: (3500 + 2000) / 1e6 / 2.
    assert.equal(row.cost_usd, 0.00275);

    const b = anthropic(suite.gw, suite.keys.b);
    for (const call of [
      () => b.messages.batches.retrieve(batch.id),
      () => b.messages.batches.cancel(batch.id),
      () => b.messages.batches.delete(batch.id),
    ]) {
      const refused = await call().catch((e: unknown) => e);
      assert.ok(refused instanceof Anthropic.NotFoundError, String(refused));
      assert.equal((refused.error as { error: { type: string } }).error.type, 'not_found_error');
    }
    assert.ok(!(await b.messages.batches.list()).data.some((x) => x.id === batch.id));

    const deleted = await client.messages.batches.delete(batch.id);
    assert.deepEqual(deleted, { id: batch.id, type: 'message_batch_deleted' });
    await assert.rejects(client.messages.batches.retrieve(batch.id), Anthropic.NotFoundError);
    assert.equal((await settlementRows(suite.gw, batch.id)).length, 1);
  });

  it("a key's model list holds for each request's params.model, in Anthropic's error shape", async () => {
    const limited = (await projectWithKey(suite.gw.url, MASTER, 'team-a', { models: ['anthropic/claude-sonnet-4-5'] })).key;
    const refused = await anthropic(suite.gw, limited)
      .messages.batches.create({ requests: requests() })
      .catch((e: unknown) => e);
    assert.ok(refused instanceof Anthropic.PermissionDeniedError, String(refused));
    assert.equal((refused.error as { type: string }).type, 'error');
  });
});

describe('two gateways sharing PostgreSQL settle a batch exactly once', { skip: noPostgres }, () => {
  let upstream: FakeUpstream;
  let fake: BatchUpstream;
  let schema: TestSchema;
  let one: TestGateway;
  let two: TestGateway;
  let key: string;

  before(async () => {
    upstream = await startFakeUpstream();
    fake = new BatchUpstream();
    upstream.reply(fake.reply);
    schema = await createTestSchema();
    // Both poll every 20 ms: their rounds meet on the same batches.
    const config = gatewayConfig(upstream.url, { store: { database_url: schema.url }, batches: { poll_interval_s: 0.02 } });
    one = await startGateway(config);
    two = await startGateway(config);
    key = (await projectWithKey(one.url, MASTER, 'team-a')).key;
  });
  after(async () => {
    await one?.close();
    await two?.close();
    await schema?.drop();
    await upstream?.close();
  });

  it('polled by both and read on both at once, each batch has one settlement row', async () => {
    const file = await upload(openai(one, key));
    const batch = await openai(two, key).batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const message = await anthropic(one, key).messages.batches.create({
      requests: [{ custom_id: 'r', params: { model: ANTHROPIC_MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] } }],
    });
    fake.completeBatch(batch.id, [{ model: OPENAI_MODEL, prompt: 1000, completion: 1000 }]);
    fake.endMessageBatch(message.id, [{ model: ANTHROPIC_MODEL, input: 1000, output: 1000 }]);
    await Promise.all([openai(one, key).batches.retrieve(batch.id), openai(two, key).batches.retrieve(batch.id)]);
    const deadline = Date.now() + 10_000;
    while ((await settlementRows(one, message.id)).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    // Several more rounds of both pollers.
    await new Promise((r) => setTimeout(r, 300));
    for (const gw of [one, two]) {
      const openaiRows = await settlementRows(gw, batch.id);
      const anthropicRows = await settlementRows(gw, message.id);
      assert.equal(openaiRows.length, 1);
      assert.equal(anthropicRows.length, 1);
      assert.equal(openaiRows[0].cost_usd, 0.0015);
      assert.equal(anthropicRows[0].cost_usd, 0.003);
    }
  });
});

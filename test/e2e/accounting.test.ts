import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { APIError } from 'openai';
import { PricingRegistry } from '../../src/accounting/pricing.ts';
import type { Usage } from '../../src/protocol/canonical/usage.ts';
import { recordJson } from '../../src/accounting/record-json.ts';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { openAIStreamBody } from '../helpers/fixtures.ts';
import { parseSse, startGateway, type TestGateway } from '../helpers/gateway.ts';

/** GET /v1/requests/{id} as JSON (the fields these tests read). */
interface LogEntry {
  request_id: string;
  created_at: string;
  provider: string;
  model: string;
  streamed: boolean;
  usage: { input_tokens: number; output_tokens: number; estimated: boolean };
  cost_usd: number;
  price_known: boolean;
  ttft_ms: number | null;
  latency_ms: number;
  overhead_ms: number | null;
  outcome: string;
  [field: string]: unknown;
}

const pricing = new PricingRegistry();
const price = (provider: string, model: string, u: Omit<Usage, 'source'>) => pricing.cost(provider, model, { ...u, source: 'provider' }).costUsd;

const QUESTION = 'What is the capital of the UK?';
/** OpenAI's chat counting recipe for one user message: 3 per message + 3 reply priming. */
const promptTokens = (count: (s: string) => number, text = QUESTION) => 3 + 3 + count(text);

const TEXT_RECORDING = 'openai-chat/gpt4o-mini-text-after-tool.sse';
/** The recording's first frames: the role chunk, "The", " capital". */
const firstFrames = () => `${openAIStreamBody(TEXT_RECORDING).toString('utf8').split('\n\n').slice(0, 3).join('\n\n')}\n\n`;

/**
 * Watches the ledger writer: every request must hand it exactly one record, whatever the ending
 * (the store's primary key would hide a second write, so count the writes themselves).
 */
function countWrites(gw: TestGateway): Map<string, number> {
  const ledger = gw.gateway.context.accounting.ledger;
  assert.ok(ledger);
  const writes = new Map<string, number>();
  const write = ledger.write.bind(ledger);
  ledger.write = (record) => {
    writes.set(record.requestId, (writes.get(record.requestId) ?? 0) + 1);
    write(record);
  };
  return writes;
}

async function getJson(gw: TestGateway, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw.url}${path}`, { headers });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/**
 * THE ledger record of a request, by its X-Request-ID and by the chatcmpl- id the client saw.
 * The record is written once the handler is done (after a client disconnect, a moment after the
 * client gave up), so this polls, bounded.
 */
async function theRecord(gw: TestGateway, writes: Map<string, number>, id: string, headers: Record<string, string> = {}) {
  for (let i = 0; i < 300 && !writes.has(id); i++) await sleep(10);
  assert.equal(writes.get(id), 1, `one ledger write for ${id}`);
  const byId = await getJson(gw, `/v1/requests/${id}`, headers);
  assert.equal(byId.status, 200);
  const byChunkId = await getJson(gw, `/v1/requests/chatcmpl-${id}`, headers);
  assert.deepEqual(byChunkId, byId);
  const stored = await gw.gateway.context.ledgerStore?.get(id);
  assert.ok(stored);
  assert.deepEqual(byId.json, recordJson(stored));
  return byId.json as LogEntry;
}

/** The record's fields that do not depend on timing, and sanity bounds on the timed ones. */
function steady(record: LogEntry, startedAt: number): Omit<LogEntry, 'created_at' | 'ttft_ms' | 'latency_ms' | 'overhead_ms'> {
  const { created_at, ttft_ms, latency_ms, overhead_ms, ...rest } = record;
  const created = Date.parse(created_at);
  assert.ok(created >= startedAt - 5 && created <= Date.now(), `created_at ${created_at}`);
  assert.ok(latency_ms >= 0 && latency_ms <= Date.now() - startedAt + 5, `latency_ms ${latency_ms}`);
  if (ttft_ms !== null) assert.ok(ttft_ms >= 0 && ttft_ms <= latency_ms, `ttft_ms ${ttft_ms}`);
  // sluice's own time (x-sluice-overhead-ms), never more than the whole request took.
  assert.ok(overhead_ms === null || (overhead_ms >= 0 && overhead_ms <= Date.now() - startedAt + 5), `overhead_ms ${overhead_ms}`);
  return rest;
}

const chatBody = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content: QUESTION }],
  stream: true,
  ...extra,
});

/** The same request for the SDK, streamed with usage on opt-in. */
const sdkStream = (model: string) => ({
  model,
  messages: [{ role: 'user' as const, content: QUESTION }],
  stream: true as const,
  stream_options: { include_usage: true },
});

async function post(gw: TestGateway, body: unknown, signal?: AbortSignal, headers: Record<string, string> = {}) {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal,
  });
}

/** Reads a streamed body until `enough(text)` holds, then drops the connection. */
async function readThenHangUp(res: Response, controller: AbortController, enough: (text: string) => boolean): Promise<string> {
  assert.ok(res.body);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!enough(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before the test hung up: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  controller.abort();
  await reader.cancel().catch(() => {});
  return text;
}

const chunkContents = (text: string) =>
  parseSse(text)
    .frames.filter((f) => f.data !== '[DONE]' && !f.data.startsWith('{"error"'))
    .map((f) => JSON.parse(f.data).choices[0]?.delta.content ?? '');

describe('accounting: one ledger record per ending', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  let writes: Map<string, number>;
  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway({
      providers: { openai: { base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' } },
      // A heartbeat commits the headers (and X-Request-ID) before the first token.
      stream: { heartbeat_s: 0.05, idle_timeout_s: 0.3 },
      ledger: { flush_interval_ms: 10 },
    });
    writes = countWrites(gw);
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('completed: provider usage, registry cost, TTFT, the strict usage chunk', async () => {
    upstream.reply({ body: openAIStreamBody(TEXT_RECORDING), randomSplit: { seed: 11, maxPiece: 40 } });
    const startedAt = Date.now();
    const { data: stream, response } = await gw.client.chat.completions.create(sdkStream('openai/gpt-4o-mini')).withResponse();
    const id = response.headers.get('x-request-id') ?? '';
    let text = '';
    let usage: unknown;
    const ids = new Set<string>();
    for await (const chunk of stream) {
      ids.add(chunk.id);
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, 'The capital of the UK is London.');
    assert.deepEqual([...ids], [`chatcmpl-${id}`]);
    // The default profile: exactly OpenAI's usage object, no cost_usd / estimated.
    assert.deepEqual(usage, {
      prompt_tokens: 78,
      completion_tokens: 9,
      total_tokens: 87,
      // The recording's audio and Predicted Outputs details (all 0) are kept.
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    });
    const record = await theRecord(gw, writes, id);
    assert.equal(typeof record.ttft_ms, 'number');
    assert.deepEqual(steady(record, startedAt), {
      object: 'sluice.request',
      request_id: id,
      key_id: null,
      provider: 'openai',
      model: 'gpt-4o-mini',
      requested_model: 'openai/gpt-4o-mini',
      surface: 'chat',
      streamed: true,
      usage: {
        input_tokens: 78,
        cached_input_tokens: 0,
        cache_write_tokens: 0,
        output_tokens: 9,
        reasoning_tokens: 0,
        audio_input_tokens: 0,
        audio_output_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
        estimated: false,
      },
      cost_usd: price('openai', 'gpt-4o-mini', { inputTokens: 78, outputTokens: 9, cachedInputTokens: 0, reasoningTokens: 0 }),
      price_known: true,
      upstream_status: 200,
      outcome: 'ok',
      error: null,
      finish_reason: 'stop',
      prompt: null,
      completion: null,
      project_id: null,
      upstream_request_id: null,
      provider_key: null,
      billing: null,
      tags: [],
    });
    assert.ok(record.cost_usd > 0);
  });

  it('upstream error before the first token: the HTTP error, a record that costs nothing', async () => {
    upstream.reply({
      status: 429,
      headers: { 'content-type': 'application/json', 'retry-after': '1' },
      body: JSON.stringify({
        error: { message: 'Rate limit reached for gpt-4o-mini', type: 'requests', code: 'rate_limit_exceeded', param: null },
      }),
    });
    const startedAt = Date.now();
    const err = await gw.client.chat.completions.create(sdkStream('openai/gpt-4o-mini')).then(
      () => assert.fail('expected a 429'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof APIError);
    assert.equal(err.status, 429);
    const id = err.requestID ?? '';
    const record = await theRecord(gw, writes, id);
    assert.deepEqual(steady(record, startedAt), {
      object: 'sluice.request',
      request_id: id,
      key_id: null,
      provider: 'openai',
      model: 'gpt-4o-mini',
      requested_model: 'openai/gpt-4o-mini',
      surface: 'chat',
      streamed: true,
      usage: {
        input_tokens: 0,
        cached_input_tokens: 0,
        cache_write_tokens: 0,
        output_tokens: 0,
        reasoning_tokens: 0,
        estimated: false,
      },
      cost_usd: 0,
      price_known: true,
      upstream_status: 429,
      outcome: 'error',
      error: {
        type: 'rate_limit_error',
        code: 'rate_limit_exceeded',
        message: 'Rate limit reached for gpt-4o-mini',
        upstream: { type: 'requests', code: 'rate_limit_exceeded' },
      },
      finish_reason: null,
      prompt: null,
      completion: null,
      project_id: null,
      upstream_request_id: null,
      provider_key: null,
      billing: null,
      tags: [],
    });
    assert.equal(record.ttft_ms, null);
  });

  it('upstream error after the first token: the error frame then [DONE], an estimated record', async () => {
    upstream.reply({ pieces: [firstFrames()], after: 'reset' });
    const startedAt = Date.now();
    const res = await post(gw, chatBody('openai/gpt-4o-mini'));
    assert.equal(res.status, 200);
    const id = res.headers.get('x-request-id') ?? '';
    const text = await res.text();
    const { frames } = parseSse(text);
    assert.deepEqual(chunkContents(text), ['', 'The', ' capital']);
    assert.deepEqual(frames.at(-1), { data: '[DONE]' });
    const error = JSON.parse(frames.at(-2)?.data ?? '{}');
    assert.deepEqual(Object.keys(error.error), ['message', 'type', 'code']);
    assert.equal(error.error.code, 'upstream_connection_error');
    const record = await theRecord(gw, writes, id);
    assert.equal(typeof record.ttft_ms, 'number');
    assert.deepEqual(steady(record, startedAt), {
      object: 'sluice.request',
      request_id: id,
      key_id: null,
      provider: 'openai',
      model: 'gpt-4o-mini',
      requested_model: 'openai/gpt-4o-mini',
      surface: 'chat',
      streamed: true,
      usage: {
        input_tokens: promptTokens(o200k),
        cached_input_tokens: 0,
        cache_write_tokens: 0,
        output_tokens: o200k('The capital'),
        reasoning_tokens: 0,
        estimated: true,
      },
      cost_usd: price('openai', 'gpt-4o-mini', { inputTokens: promptTokens(o200k), outputTokens: o200k('The capital') }),
      price_known: true,
      upstream_status: 200,
      outcome: 'error',
      error: { type: 'upstream_error', code: 'upstream_connection_error', message: error.error.message },
      finish_reason: null,
      prompt: null,
      completion: null,
      project_id: null,
      upstream_request_id: null,
      provider_key: null,
      billing: null,
      tags: [],
    });
  });

  it('idle timeout: the stream_idle_timeout frame, the upstream request aborted, an error record', async () => {
    upstream.reply({ pieces: [firstFrames()], after: 'hang' });
    const closed = upstream.closedEarly;
    const startedAt = Date.now();
    const res = await post(gw, chatBody('openai/gpt-4o-mini'));
    const id = res.headers.get('x-request-id') ?? '';
    const text = await res.text();
    const { frames } = parseSse(text);
    assert.deepEqual(chunkContents(text), ['', 'The', ' capital']);
    assert.deepEqual(frames.slice(-2), [
      {
        data: JSON.stringify({
          error: {
            message: 'No data from the upstream for 0.3s; the stream was ended.',
            type: 'stream_idle_timeout',
            code: 'stream_idle_timeout',
          },
        }),
      },
      { data: '[DONE]' },
    ]);
    await upstream.waitForEarlyClose(2000, closed + 1);
    const record = await theRecord(gw, writes, id);
    const rest = steady(record, startedAt);
    assert.deepEqual(
      [rest.outcome, rest.upstream_status, rest.error, rest.usage],
      [
        'error',
        200,
        {
          type: 'stream_idle_timeout',
          code: 'stream_idle_timeout',
          message: 'No data from the upstream for 0.3s; the stream was ended.',
        },
        {
          input_tokens: promptTokens(o200k),
          cached_input_tokens: 0,
          cache_write_tokens: 0,
          output_tokens: o200k('The capital'),
          reasoning_tokens: 0,
          estimated: true,
        },
      ],
    );
    assert.ok(record.latency_ms >= 295, `latency_ms ${record.latency_ms}`);
    assert.equal(typeof record.ttft_ms, 'number');
  });

  it('client disconnect before the first token: cancelled, no TTFT, the prompt counted', async () => {
    upstream.reply({ pieces: [], after: 'hang' });
    const closed = upstream.closedEarly;
    const controller = new AbortController();
    const startedAt = Date.now();
    const res = await post(gw, chatBody('openai/gpt-4o-mini'), controller.signal);
    const id = res.headers.get('x-request-id') ?? '';
    const seen = await readThenHangUp(res, controller, (t) => t.includes(': heartbeat'));
    assert.ok(!seen.includes('data:'));
    await upstream.waitForEarlyClose(2000, closed + 1);
    const record = await theRecord(gw, writes, id);
    const rest = steady(record, startedAt);
    assert.equal(record.ttft_ms, null);
    assert.deepEqual(
      [rest.outcome, rest.upstream_status, rest.error, rest.usage, rest.cost_usd],
      [
        'cancelled',
        200,
        { type: 'cancelled', code: 'cancelled', message: 'The client closed the connection.' },
        {
          input_tokens: promptTokens(o200k),
          cached_input_tokens: 0,
          cache_write_tokens: 0,
          output_tokens: 0,
          reasoning_tokens: 0,
          estimated: true,
        },
        price('openai', 'gpt-4o-mini', { inputTokens: promptTokens(o200k), outputTokens: 0 }),
      ],
    );
  });

  it('client disconnect after the first token: cancelled, TTFT, the output so far counted', async () => {
    upstream.reply({ pieces: [firstFrames()], after: 'hang' });
    const closed = upstream.closedEarly;
    const controller = new AbortController();
    const startedAt = Date.now();
    const res = await post(gw, chatBody('openai/gpt-4o-mini'), controller.signal);
    const id = res.headers.get('x-request-id') ?? '';
    await readThenHangUp(res, controller, (t) => t.includes('" capital"'));
    await upstream.waitForEarlyClose(2000, closed + 1);
    const record = await theRecord(gw, writes, id);
    const rest = steady(record, startedAt);
    assert.equal(typeof record.ttft_ms, 'number');
    assert.deepEqual(
      [rest.outcome, rest.upstream_status, rest.error, rest.usage],
      [
        'cancelled',
        200,
        { type: 'cancelled', code: 'cancelled', message: 'The client closed the connection.' },
        {
          input_tokens: promptTokens(o200k),
          cached_input_tokens: 0,
          cache_write_tokens: 0,
          output_tokens: o200k('The capital'),
          reasoning_tokens: 0,
          estimated: true,
        },
      ],
    );
  });

  it('a refused request (unknown model) leaves its one record too', async () => {
    const res = await post(gw, chatBody('nowhere/model-x'));
    assert.equal(res.status, 404);
    const id = res.headers.get('x-request-id') ?? '';
    const record = await theRecord(gw, writes, id);
    assert.deepEqual(
      [record.outcome, record.provider, record.requested_model, record.cost_usd, (record.error as { code: string }).code],
      ['error', '', 'nowhere/model-x', 0, 'model_not_found'],
    );
  });

  for (const [recording, model, count] of [
    ['openai-chat/gpt35-parallel-tool-calls-no-usage.sse', 'gpt-3.5-turbo-0125', cl100k],
    ['openai-chat/azure-gpt35-text-content-filter.sse', 'gpt-35-turbo', cl100k],
  ] as const) {
    it(`no upstream usage (${recording}): an estimated record and, on opt-in, a usage chunk`, async () => {
      upstream.reply({ body: openAIStreamBody(recording), randomSplit: { seed: 5 } });
      const { data: stream, response } = await gw.client.chat.completions.create(sdkStream(`openai/${model}`)).withResponse();
      const id = response.headers.get('x-request-id') ?? '';
      // What the client saw, in order: the text a tokenizer would count.
      let output = '';
      let usage: unknown;
      for await (const chunk of stream) {
        if (chunk.usage) usage = chunk.usage;
        const delta = chunk.choices[0]?.delta;
        output += delta?.content ?? '';
        for (const call of delta?.tool_calls ?? []) output += (call.function?.name ?? '') + (call.function?.arguments ?? '');
      }
      assert.ok(output.length > 20);
      const input = promptTokens(count);
      const completion = count(output);
      assert.deepEqual(usage, { prompt_tokens: input, completion_tokens: completion, total_tokens: input + completion });
      const record = await theRecord(gw, writes, id);
      assert.deepEqual(record.usage, {
        input_tokens: input,
        cached_input_tokens: 0,
        cache_write_tokens: 0,
        output_tokens: completion,
        reasoning_tokens: 0,
        estimated: true,
      });
      assert.equal(record.outcome, 'ok');
      assert.equal(record.cost_usd, price('openai', model, { inputTokens: input, outputTokens: completion }));
      assert.ok(record.cost_usd > 0);
    });
  }
});

describe('accounting: usage_extensions', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway({
      providers: { openai: { base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' } },
      stream: { usage_extensions: true },
    });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  async function usageChunk(recording: string, model: string) {
    upstream.reply({ body: openAIStreamBody(recording) });
    const res = await post(gw, chatBody(`openai/${model}`, { stream_options: { include_usage: true } }));
    const id = res.headers.get('x-request-id') ?? '';
    const { frames } = parseSse(await res.text());
    const usage = JSON.parse(frames.at(-2)?.data ?? '{}').usage;
    const { ledgerStore, accounting } = gw.gateway.context;
    let record = await ledgerStore?.get(id);
    for (let i = 0; i < 300 && !record; i++) {
      await sleep(10);
      await accounting.ledger?.flush();
      record = await ledgerStore?.get(id);
    }
    return { usage, record };
  }

  it('adds cost_usd and estimated to the usage chunk: provider usage', async () => {
    const { usage } = await usageChunk(TEXT_RECORDING, 'gpt-4o-mini');
    assert.deepEqual(usage, {
      prompt_tokens: 78,
      completion_tokens: 9,
      total_tokens: 87,
      // The recording's audio and Predicted Outputs details (all 0) are kept.
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      cost_usd: price('openai', 'gpt-4o-mini', { inputTokens: 78, outputTokens: 9 }),
      estimated: false,
    });
  });

  it('adds cost_usd and estimated to the usage chunk: counted usage, the same figures as the record', async () => {
    const { usage, record } = await usageChunk('openai-chat/azure-gpt35-text-content-filter.sse', 'gpt-35-turbo');
    assert.equal(usage.estimated, true);
    assert.deepEqual([usage.prompt_tokens, usage.completion_tokens, usage.cost_usd], [record?.inputTokens, record?.outputTokens, record?.costUsd]);
    assert.ok(usage.cost_usd > 0);
    assert.equal(usage.cost_usd, price('openai', 'gpt-35-turbo', { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens }));
    assert.deepEqual(Object.keys(usage), ['prompt_tokens', 'completion_tokens', 'total_tokens', 'cost_usd', 'estimated']);
  });
});

describe('accounting: the request log over HTTP, behind the master key', () => {
  const KEY = 'sk-sluice-master';
  const auth = { authorization: `Bearer ${KEY}` };
  let gw: TestGateway;
  /** X-Request-ID of each request, in the order they were made. */
  const made: { id: string; model: string; outcome: string }[] = [];

  before(async () => {
    gw = await startGateway({ auth: { master_key: KEY }, ledger: { flush_interval_ms: 10 } });
    const run = async (model: string, outcome: string, stream = true) => {
      const res = await post(gw, chatBody(model, { stream }), undefined, auth);
      await res.text();
      made.push({ id: res.headers.get('x-request-id') ?? '', model, outcome });
      // Distinct created_at for the time-range filters.
      await sleep(3);
    };
    for (const n of [1, 2, 3]) await run('mock/echo', 'ok', n !== 2);
    await run('mock/reasoning', 'ok');
    await run('mock/error', 'error');
    await run('mock/unavailable', 'error');
    await run('mock/echo', 'ok');
    await run('mock/tools', 'ok');
  });
  after(async () => {
    await gw.close();
  });

  const list = async (query: string) => {
    const { status, json } = await getJson(gw, `/v1/requests${query}`, auth);
    assert.equal(status, 200, JSON.stringify(json));
    return json as { object: string; data: LogEntry[]; has_more: boolean; next_cursor: string | null };
  };
  const idsOf = (page: { data: LogEntry[] }) => page.data.map((r) => r.request_id);
  const newestFirst = (keep: (m: (typeof made)[number]) => boolean) =>
    made
      .filter(keep)
      .map((m) => m.id)
      .reverse();

  it('requires the master key for the request log', async () => {
    const id = made[0].id;
    for (const path of ['/v1/requests', `/v1/requests/${id}`]) {
      assert.equal((await getJson(gw, path)).status, 401);
      assert.equal((await getJson(gw, path, { authorization: 'Bearer sk-wrong' })).status, 401);
      assert.equal((await getJson(gw, path, auth)).status, 200);
    }
  });

  it('lists every request newest first, and filters by model, provider and outcome', async () => {
    const all = await list('');
    assert.equal(all.object, 'list');
    assert.deepEqual(
      idsOf(all),
      newestFirst(() => true),
    );
    assert.equal(all.has_more, false);
    assert.deepEqual(
      idsOf(await list('?model=echo')),
      newestFirst((m) => m.model === 'mock/echo'),
    );
    assert.deepEqual(
      idsOf(await list('?provider=mock')),
      newestFirst(() => true),
    );
    assert.deepEqual(idsOf(await list('?provider=openai')), []);
    assert.deepEqual(
      idsOf(await list('?outcome=error')),
      newestFirst((m) => m.outcome === 'error'),
    );
    assert.deepEqual(
      idsOf(await list('?outcome=ok&model=echo')),
      newestFirst((m) => m.model === 'mock/echo'),
    );
    // The non-stream request is in the log too, as such.
    assert.deepEqual(
      all.data.filter((r) => !r.streamed).map((r) => r.request_id),
      [made[1].id],
    );
  });

  it('filters by time range, as ISO dates or epoch milliseconds (since inclusive, until exclusive)', async () => {
    const all = (await list('')).data.toReversed();
    const from = all[2].created_at;
    const to = all[5].created_at;
    const expected = all
      .slice(2, 5)
      .map((r) => r.request_id)
      .reverse();
    assert.deepEqual(idsOf(await list(`?since=${encodeURIComponent(from)}&until=${encodeURIComponent(to)}`)), expected);
    assert.deepEqual(idsOf(await list(`?since=${Date.parse(from)}&until=${Date.parse(to)}`)), expected);
  });

  it('paginates with next_cursor: every request once, in order', async () => {
    const seen: string[] = [];
    let query = '?limit=3';
    for (let pages = 0; pages < 10; pages++) {
      const page = await list(query);
      assert.ok(page.data.length <= 3);
      seen.push(...idsOf(page));
      if (!page.has_more) {
        assert.equal(page.next_cursor, null);
        break;
      }
      query = `?limit=3&cursor=${encodeURIComponent(page.next_cursor ?? '')}`;
    }
    assert.deepEqual(
      seen,
      newestFirst(() => true),
    );
  });

  it('rejects bad query parameters with 400 and an unknown id with 404', async () => {
    for (const q of ['?outcome=bogus', '?limit=0', '?limit=1001', '?limit=abc', '?since=yesterday']) {
      const { status, json } = await getJson(gw, `/v1/requests${q}`, auth);
      assert.equal(status, 400, q);
      assert.equal((json.error as { type: string }).type, 'invalid_request_error');
    }
    const missing = await getJson(gw, '/v1/requests/chatcmpl-doesnotexist', auth);
    assert.equal(missing.status, 404);
    assert.equal((missing.json.error as { code: string }).code, 'request_not_found');
  });
});

describe('accounting: refusals at the door', () => {
  const KEY = 'sk-sluice-master';
  let gw: TestGateway;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-rejections-'));
    // The failure throttle off (auth.failures_per_minute: 0): the flood below is one client's, and
    // what is tested is how the store counts refusals (edge.test.ts tests the throttle's 429s).
    gw = await startGateway({
      auth: { master_key: KEY, failures_per_minute: 0 },
      store: { path: join(dir, 'sluice.db') },
      ledger: { flush_interval_ms: 10 },
    });
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('an authenticated request refused before any provider keeps its own record', async () => {
    const res = await post(gw, chatBody('nope/model'), undefined, { authorization: `Bearer ${KEY}` });
    assert.equal(res.status, 404);
    const id = res.headers.get('x-request-id') ?? '';
    await res.text();
    const log = await getJson(gw, `/v1/requests/${id}`, { authorization: `Bearer ${KEY}` });
    assert.equal(log.status, 200);
    const record = log.json as LogEntry;
    assert.equal(record.outcome, 'error');
    assert.equal(record.surface, 'chat');
    assert.equal(record.requested_model, 'nope/model');
    assert.equal((record.error as { code: string }).code, 'model_not_found');
  });

  it('unauthenticated floods are counted per minute and reason, not written as a row each (2,000 refused 401s)', async () => {
    const refuse = async (i: number) => {
      const res = await post(gw, chatBody('mock/echo'), undefined, { authorization: i % 2 ? 'Bearer sk-wrong' : '' });
      assert.equal(res.status, 401);
      await res.text();
    };
    for (let i = 0; i < 2_000; i += 50) await Promise.all(Array.from({ length: 50 }, (_, j) => refuse(i + j)));
    await gw.close();
    const db = new DatabaseSync(join(dir, 'sluice.db'));
    try {
      const rows = db.prepare('SELECT COUNT(*) AS n FROM ledger').get() as { n: number };
      // Only the authenticated refusal of the test above.
      assert.equal(rows.n, 1);
      const counted = db
        .prepare('SELECT surface, code, SUM(count) AS n, COUNT(*) AS windows FROM rejections GROUP BY surface, code ORDER BY code')
        .all();
      assert.deepEqual(
        counted.map((r) => ({ ...r })),
        [
          { surface: 'chat', code: 'invalid_api_key', n: 1_000, windows: (counted[0] as { windows: number }).windows },
          { surface: 'chat', code: 'missing_api_key', n: 1_000, windows: (counted[1] as { windows: number }).windows },
        ],
      );
      // One row per minute window: the flood spans one or two minutes at most.
      for (const r of counted) assert.ok((r as { windows: number }).windows <= 2);
    } finally {
      db.close();
    }
  });
});

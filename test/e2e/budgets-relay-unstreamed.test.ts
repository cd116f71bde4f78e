import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { parseSse, requestRecord, startGateway, type TestGateway, upstreamConfig } from '../helpers/gateway.ts';
import { checkResponsesStream } from '../helpers/responses-grammar.ts';
import { responsesSse } from '../helpers/responses-upstream.ts';
import { post, speakAsTestCallers } from './limits-support.ts';

/** $0.001 a token in and out: a budget of $0.05 is 50 tokens. */
const PRICED = { pricing: { 'up/gpt-test': { input_mtok: 1000, output_mtok: 1000 } } };
const MODEL = 'up/gpt-test';
/** An SSE body as one piece per frame (sent with a delay between them). */
const framesOf = (sse: string) => sse.split(/(?<=\n\n)/);
const JSON_HEADERS = { 'content-type': 'application/json' };

/** A chat.completion that ran out of room (finish_reason length). */
function chatCut(text: string, completionTokens: number): string {
  return JSON.stringify({
    id: 'chatcmpl-up',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-test',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'length' }],
    usage: { prompt_tokens: 10, completion_tokens: completionTokens, total_tokens: 10 + completionTokens },
  });
}

describe('budgets: a relayed Responses stream (responses_api: true) is stopped by its budget as it streams', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway({ ...upstreamConfig(upstream.url, { responses_api: true }), ...PRICED });
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 0.05 }]);
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('ends with response.incomplete (max_output_tokens) closing the open items; the upstream is cut; the row says budget_exhausted', async () => {
    // 60 deltas of 8 bytes = ~120 tokens of output: far past a 50-token budget.
    upstream.reply({ pieces: framesOf(responsesSse(Array.from({ length: 60 }, () => 'tokens. '))), delayMs: 5 });
    const closedBefore = upstream.closedEarly;
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'x-test-key': 'relay' },
      body: JSON.stringify({ model: MODEL, input: 'Hi', stream: true }),
    });
    assert.equal(res.status, 200);
    const body = await res.text();
    const { events, terminal } = checkResponsesStream(body, { upstream: true });
    assert.equal(terminal.type, 'response.incomplete');
    assert.deepEqual(terminal.response.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal(terminal.response.id, 'resp_up');
    const streamed = events
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    // The prompt ('"Hi"', 7 tokens estimated) and what was streamed stay within the 50 tokens.
    assert.ok(streamed.length > 0 && streamed.length <= (50 - 7) * 4, `streamed ${streamed.length} bytes`);
    // The open message is closed as incomplete with exactly what the client received.
    const item = terminal.response.output[0];
    assert.equal(item.status, 'incomplete');
    assert.equal(item.content?.[0].text, streamed);
    assert.ok(terminal.response.usage && terminal.response.usage.output_tokens > 0);
    await upstream.waitForEarlyClose(5_000, closedBefore + 1);

    const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.equal(row.outcome, 'ok');
    assert.equal(row.finish_reason, 'budget_exhausted');
    assert.ok(row.usage.output_tokens > 0, 'the output streamed before the stop is billed');
    // The stop prices 4 bytes a token and the prompt by estimate; the record is sluice's own count
    // of the stream cut short (no upstream usage came), which may differ by a few tokens.
    assert.ok(row.cost_usd > 0.03 && row.cost_usd <= 0.055, `cost ${row.cost_usd}`);
  });

  it('a grant too small for the first read still opens the response it ends (one upstream read)', async () => {
    // $0.0085: the 7-token prompt and one token of output fit (the least a request is let in for),
    // its first delta (4 tokens) does not.
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 0.0085 }]);
    upstream.reply({ body: responsesSse(['tokens. tokens. ']) });
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'x-test-key': 'relay-prompt-only' },
      body: JSON.stringify({ model: MODEL, input: 'Hi', stream: true }),
    });
    const { events, terminal } = checkResponsesStream(await res.text(), { upstream: true });
    assert.deepEqual(
      events.map((e) => e.type),
      ['response.created', 'response.in_progress', 'response.incomplete'],
    );
    assert.deepEqual(terminal.response.output, []);
  });

  it('the openai SDK reads the stopped stream to its response.incomplete', async () => {
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 0.05 }]);
    upstream.reply({ pieces: framesOf(responsesSse(Array.from({ length: 60 }, () => 'tokens. '))), delayMs: 5 });
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', defaultHeaders: { 'x-test-key': 'relay-sdk' } });
    const stream = await client.responses.create({ model: MODEL, input: 'Hi', stream: true });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    assert.equal(types.at(-1), 'response.incomplete');
  });

  it('a relayed stream within its budget is relayed whole, its usage the upstream’s', async () => {
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 1 }]);
    const sse = responsesSse(['Hello', ' there']);
    upstream.reply({ pieces: framesOf(sse), delayMs: 1 });
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'x-test-key': 'relay-whole' },
      body: JSON.stringify({ model: MODEL, input: 'Hi', stream: true }),
    });
    const frames = (text: string) => parseSse(text).frames.map((f) => [f.event, f.data]);
    assert.deepEqual(frames(await res.text()), frames(`${sse}data: [DONE]\n\n`));
    const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.deepEqual([row.finish_reason, row.usage.output_tokens, row.usage.estimated], ['stop', 2, false]);
  });
});

describe('the Responses relay without a budget: what the client left is billed, an upstream 429 is passed on', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway({ ...upstreamConfig(upstream.url, { responses_api: true }), ...PRICED });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('bill_generated (the default): the deltas relayed before the disconnect are counted and priced', async () => {
    upstream.reply({ pieces: framesOf(responsesSse(Array.from({ length: 200 }, () => 'word '))), delayMs: 10 });
    const closed = upstream.closedEarly;
    const controller = new AbortController();
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ model: MODEL, input: 'Hi', stream: true }),
      signal: controller.signal,
    });
    const reader = res.body?.getReader();
    let seen = 0;
    while (seen < 3_000) seen += (await reader?.read())?.value?.length ?? 0;
    controller.abort();
    await upstream.waitForEarlyClose(5_000, closed + 1);
    const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.equal(row.outcome, 'cancelled');
    assert.ok(row.usage.output_tokens > 0, `output_tokens ${row.usage.output_tokens}`);
    assert.ok(row.cost_usd > row.usage.input_tokens * 0.001, `cost ${row.cost_usd}`);
  });

  it("an upstream's 429 keeps its Retry-After, x-ratelimit-* and request id (header and ledger)", async () => {
    upstream.reply({
      status: 429,
      headers: {
        ...JSON_HEADERS,
        'retry-after': '3',
        'x-ratelimit-limit-tokens': '30000',
        'x-ratelimit-remaining-tokens': '0',
        'x-ratelimit-reset-tokens': '3s',
        'x-request-id': 'req_relay_429',
      },
      body: JSON.stringify({ error: { message: 'Rate limit reached', type: 'tokens', code: 'rate_limit_exceeded' } }),
    });
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ model: MODEL, input: 'Hi', stream: true }),
    });
    assert.equal(res.status, 429);
    assert.equal(JSON.parse(await res.text()).error.code, 'rate_limit_exceeded');
    assert.equal(res.headers.get('retry-after'), '3');
    assert.equal(res.headers.get('x-ratelimit-remaining-tokens'), '0');
    assert.equal(res.headers.get('x-ratelimit-reset-tokens'), '3s');
    assert.equal(res.headers.get('x-upstream-request-id'), 'req_relay_429');
    const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.equal(row.upstream_request_id, 'req_relay_429');
  });
});

describe('budgets: a non-streamed request, which cannot be cut, is capped to what its reservation pays for', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  /** The same upstream as Anthropic, for the relayed Messages API. */
  let anthropicGw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway({
      ...upstreamConfig(upstream.url, { responses_api: true }),
      ...PRICED,
      limits: { reserve_output_tokens: 100 },
    });
    anthropicGw = await startGateway(
      { pricing: { 'anthropic/claude-sonnet-4-5': { input_mtok: 1000, output_mtok: 1000 } } },
      { ANTHROPIC_API_KEY: 'sk-ant-e2e', ANTHROPIC_BASE_URL: upstream.url },
    );
    speakAsTestCallers(anthropicGw, [{ scope: 'key', period: 'day', limitUsd: 0.03 }]);
  });
  after(async () => {
    await gw.close();
    await anthropicGw.close();
    await upstream.close();
  });

  it('chat: max_completion_tokens is what the budget has left; an answer cut there is budget_exhausted in the ledger', async () => {
    // $0.03 = 30 tokens; the prompt ('Hi') is 7 estimated: 23 tokens of output are paid for.
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 0.03 }]);
    upstream.reply({ body: chatCut('cut short', 23), headers: JSON_HEADERS });
    const res = await post(gw, { model: MODEL, messages: [{ role: 'user', content: 'Hi' }] }, { 'x-test-key': 'tight' });
    assert.equal(res.status, 200);
    const sent = upstream.requests.at(-1)?.json as Record<string, unknown>;
    assert.equal(sent.max_completion_tokens, 23);
    assert.equal(sent.max_tokens, undefined);
    // The client sees the upstream's finish; the ledger says the budget ended it.
    assert.equal(JSON.parse(res.text).choices[0].finish_reason, 'length');
    const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.equal(row.finish_reason, 'budget_exhausted');
  });

  it('chat: a limit the reservation covers is sent unchanged; none at all becomes reserve_output_tokens', async () => {
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 10 }]);
    upstream.reply({ body: chatCut('x', 5), headers: JSON_HEADERS });
    const asked = await post(gw, { model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] }, { 'x-test-key': 'roomy' });
    assert.equal(asked.status, 200);
    const sent = upstream.requests.at(-1)?.json as Record<string, unknown>;
    assert.deepEqual([sent.max_tokens, sent.max_completion_tokens], [5, undefined]);
    // Its own limit ended it, not the budget.
    assert.equal((await requestRecord(gw, asked.headers.get('x-request-id') ?? '')).finish_reason, 'length');

    const unbounded = await post(gw, { model: MODEL, messages: [{ role: 'user', content: 'Hi' }] }, { 'x-test-key': 'roomy' });
    assert.equal(unbounded.status, 200);
    const unboundedSent = upstream.requests.at(-1)?.json as Record<string, unknown>;
    assert.equal(unboundedSent.max_completion_tokens, 100);
  });

  it('a budget with room for the prompt but not one token of output refuses before sending', async () => {
    // $0.0075: the 7-token prompt fits, an 8th token does not.
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 0.0075 }]);
    const sentBefore = upstream.requests.length;
    const res = await post(gw, { model: MODEL, messages: [{ role: 'user', content: 'Hi' }] }, { 'x-test-key': 'prompt-only' });
    assert.equal(res.status, 429);
    assert.equal(JSON.parse(res.text).error.code, 'insufficient_quota');
    assert.equal(upstream.requests.length, sentBefore);
  });

  it('relayed Messages (Anthropic): max_tokens is capped the same way', async () => {
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 0.03 }]);
    upstream.reply({
      headers: JSON_HEADERS,
      body: JSON.stringify({
        id: 'msg_up',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [{ type: 'text', text: 'cut' }],
        stop_reason: 'max_tokens',
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 23 },
      }),
    });
    const res = await fetch(`${anthropicGw.url}/v1/messages`, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'x-test-key': 'messages-tight' },
      body: JSON.stringify({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 500, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    const sent = upstream.requests.at(-1)?.json as Record<string, unknown>;
    assert.equal(sent.max_tokens, 23);
  });

  it('relayed Responses: max_output_tokens is capped the same way', async () => {
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 0.03 }]);
    const recorded = parseSse(responsesSse(['cut'])).frames.at(-1)?.data ?? '{}';
    upstream.reply({ body: JSON.stringify({ ...JSON.parse(recorded).response, status: 'incomplete' }), headers: JSON_HEADERS });
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'x-test-key': 'relay-tight' },
      body: JSON.stringify({ model: MODEL, input: 'Hi', max_output_tokens: 500 }),
    });
    assert.equal(res.status, 200);
    const sent = upstream.requests.at(-1)?.json as Record<string, unknown>;
    assert.equal(sent.max_output_tokens, 23);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { calcPrice } from '@pydantic/genai-prices';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { roundUsd } from '../../src/accounting/pricing.ts';
import type { CanonicalEvent } from '../../src/protocol/canonical/events.ts';
import { anthropicPayloads, anthropicStreamBody } from '../helpers/anthropic-fixtures.ts';
import { bedrockBody, expectedBedrockEvents } from '../helpers/bedrock-fixtures.ts';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { openAIPayloads, openAIStreamBody, readFixture } from '../helpers/fixtures.ts';
import { geminiPayloads } from '../helpers/gemini-fixtures.ts';
import { rawStream, requestRecord, startGateway, type TestGateway } from '../helpers/gateway.ts';

/*
 * The accounting profile (reference/accounting-events.txt), byte for byte: the whole body is
 * built from the frame shapes of the reference with the helpers below, and only what cannot be
 * known in advance is filled in from the response: the request id (X-Request-ID), the created
 * time and latency_ms (both checked against the test's clock).
 */

const PROMPT = 'hi';
/** OpenAI's counting recipe for one user message (3 per message, 3 to prime the reply), o200k. */
const COUNTED_INPUT = 3 + 3 + o200k(PROMPT);

/** What a stream's frames share. */
interface StreamIdentity {
  id: string;
  created: number;
  /** As the client named it (`provider/model`). */
  requested: string;
  provider: string;
  /** The provider-side model id (usage_start / usage_final). */
  model: string;
  serviceTier: string | null;
  fingerprint: string | null;
}

const json = JSON.stringify;
const DONE = 'data: [DONE]\n\n';

const named = (event: string, payload: object) => `event: ${event}\ndata: ${json(payload)}\n\n`;

/** A chat.completion.chunk with the profile's flat fields between the envelope and `choices`. */
function chunk(s: StreamIdentity, flat: string, choice: string): string {
  return (
    `data: {"id":"chatcmpl-${s.id}","object":"chat.completion.chunk","created":${s.created},"model":${json(s.requested)},` +
    `"service_tier":${json(s.serviceTier)},"system_fingerprint":${json(s.fingerprint)},${flat}"choices":[${choice}]}\n\n`
  );
}

const flat = (s: StreamIdentity, type: string, data: string) => `"type":"${type}","data":${json(data)},"provider":${json(s.provider)},`;
const deltaChoice = (delta: object) => `{"index":0,"delta":${json(delta)},"logprobs":null,"finish_reason":null}`;

const frames = {
  /**
   * Sent when the upstream accepts the request: the input is sluice's count then, flagged
   * estimated; or with a provider's first event that reports it (Anthropic's message_start), unflagged.
   */
  usageStart: (s: StreamIdentity, inputTokens: number, estimated = true) =>
    named('usage_start', {
      type: 'usage_start',
      request_id: s.id,
      provider: s.provider,
      model: s.model,
      input_tokens: inputTokens,
      ...(estimated && { estimated: true }),
    }),
  role: (s: StreamIdentity) => chunk(s, flat(s, 'content', ''), deltaChoice({ role: 'assistant', content: '' })),
  content: (s: StreamIdentity, text: string) => chunk(s, flat(s, 'content', text), deltaChoice({ content: text })),
  reasoning: (s: StreamIdentity, text: string) => chunk(s, flat(s, 'reasoning', text), deltaChoice({ reasoning_content: text })),
  toolStart: (s: StreamIdentity, index: number, id: string, name: string) =>
    chunk(s, flat(s, 'tool_call', ''), deltaChoice({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] })),
  toolArgs: (s: StreamIdentity, index: number, args: string) =>
    chunk(s, flat(s, 'tool_call', args), deltaChoice({ tool_calls: [{ index, function: { arguments: args } }] })),
  finish: (s: StreamIdentity, reason: string) =>
    chunk(
      s,
      `"type":"finish","provider":${json(s.provider)},"finish_reason":"${reason}",`,
      `{"index":0,"delta":{},"logprobs":null,"finish_reason":"${reason}"}`,
    ),
  cacheHit: (s: StreamIdentity, cached: number) =>
    named('cache_hit', { type: 'cache_hit', request_id: s.id, provider: s.provider, model: s.model, cached_tokens: cached }),
  usageFinal: (s: StreamIdentity, u: Totals, latencyMs: number) =>
    named('usage_final', {
      type: 'usage_final',
      request_id: s.id,
      provider: s.provider,
      model: s.model,
      input_tokens: u.input,
      output_tokens: u.output,
      cost_usd: u.cost,
      latency_ms: latencyMs,
      estimated: false,
    }),
  responseDone: (s: StreamIdentity, u: Totals) =>
    `data: ${json({
      type: 'response.done',
      response: {
        id: s.id,
        object: 'response',
        status: 'completed',
        usage: { prompt_tokens: u.input, completion_tokens: u.output, total_tokens: u.input + u.output },
      },
    })}\n\n`,
  /** In place of usage_final, so with its usage so far; sluice's code, and the upstream's own beside it. */
  error: (s: StreamIdentity, message: string, code: string, soFar: SoFar, upstream?: Record<string, unknown>) =>
    `data: ${json({
      type: 'error',
      data: message,
      provider: s.provider,
      code,
      ...(upstream ? { upstream } : {}),
      input_tokens: soFar.input,
      output_tokens: soFar.output,
      cost_usd: soFar.cost,
      latency_ms: soFar.latencyMs,
      estimated: soFar.estimated,
    })}\n\n`,
};

/** A failed stream's usage so far, as its error frame says it. */
interface SoFar {
  input: number;
  output: number;
  cost: number;
  estimated: boolean;
  latencyMs: number;
}

/**
 * The usage so far of a failed stream is the ledger's (counted: the output tokens of a cut stream
 * are not known in advance); latency_ms is checked against the test's clock.
 */
async function soFarOf(gw: TestGateway, res: { headers: Headers; text: string }, startedAt: number): Promise<SoFar> {
  const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
  return {
    input: row.usage.input_tokens,
    output: row.usage.output_tokens,
    cost: row.cost_usd,
    estimated: row.usage.estimated,
    latencyMs: latencyOf(res.text, startedAt),
  };
}

interface Totals {
  input: number;
  output: number;
  cached: number;
  cost: number;
}

/** The content frames for a list of canonical events: the role chunk first, one frame per delta. */
function contentFrames(s: StreamIdentity, events: CanonicalEvent[]): string {
  let out = '';
  let started = false;
  const toolIndex = new Map<number, number>();
  for (const e of events) {
    if (!started && e.type !== 'start' && e.type !== 'usage' && e.type !== 'finish') {
      out += frames.role(s);
      started = true;
    }
    if (e.type === 'text') out += frames.content(s, e.text);
    else if (e.type === 'reasoning') out += frames.reasoning(s, e.text);
    else if (e.type === 'tool-call-start') {
      toolIndex.set(e.index, toolIndex.size);
      out += frames.toolStart(s, toolIndex.get(e.index) ?? -1, e.id, e.name);
    } else if (e.type === 'tool-call-delta' && e.arguments) out += frames.toolArgs(s, toolIndex.get(e.index) ?? -1, e.arguments);
    else if (e.type === 'finish') out += frames.finish(s, e.reason);
  }
  return out;
}

/** The successful body: usage_start, content, finish, cache_hit if cached input, usage_final, response.done, [DONE]. */
function successBody(
  s: StreamIdentity,
  events: CanonicalEvent[],
  startInput: number,
  totals: Totals,
  latencyMs: number,
  startEstimated = true,
): string {
  return (
    frames.usageStart(s, startInput, startEstimated) +
    contentFrames(s, events) +
    (totals.cached > 0 ? frames.cacheHit(s, totals.cached) : '') +
    frames.usageFinal(s, totals, latencyMs) +
    frames.responseDone(s, totals) +
    DONE
  );
}

const FINISH: Record<string, string> = { stop: 'stop', length: 'length', tool_calls: 'tool_calls', STOP: 'stop' };

/**
 * An OpenAI-family recording read as the deltas a client should see: reasoning (either field
 * name), content, tool calls (name, then arguments), the finish reason. Empty strings carry
 * nothing and are not frames.
 */
function openAIFamilyEvents(recording: string): CanonicalEvent[] {
  const out: CanonicalEvent[] = [];
  for (const { data } of openAIPayloads(recording)) {
    if (data === '[DONE]') continue;
    const choice = JSON.parse(data).choices?.[0];
    if (!choice) continue;
    const d = choice.delta ?? {};
    const reasoning = d.reasoning_content || d.reasoning;
    if (reasoning) out.push({ type: 'reasoning', choice: 0, text: reasoning });
    if (typeof d.content === 'string' && d.content) out.push({ type: 'text', choice: 0, text: d.content });
    for (const t of d.tool_calls ?? []) {
      if (t.id) out.push({ type: 'tool-call-start', choice: 0, index: t.index, id: t.id, name: t.function.name });
      if (t.function?.arguments) out.push({ type: 'tool-call-delta', choice: 0, index: t.index, arguments: t.function.arguments });
    }
    if (choice.finish_reason) out.push({ type: 'finish', choice: 0, reason: FINISH[choice.finish_reason] as 'stop' });
  }
  return out;
}

/** service_tier and system_fingerprint as the recording's first chunk states them. */
function openAIEnvelope(recording: string): Pick<StreamIdentity, 'serviceTier' | 'fingerprint'> {
  const first = JSON.parse(openAIPayloads(recording)[0].data);
  return { serviceTier: first.service_tier ?? null, fingerprint: first.system_fingerprint ?? null };
}

/** The registry's price for these totals (cache reads at their own rate). */
function registryPrice(providerId: string, model: string, t: Omit<Totals, 'cost'>): number {
  const price = calcPrice({ input_tokens: t.input, output_tokens: t.output, cache_read_tokens: t.cached }, model, { providerId });
  assert.ok(price, `the registry prices ${providerId}/${model}`);
  // sluice keeps costs to 1e-10 USD (accounting/pricing.ts).
  return roundUsd(price.total_price);
}

interface ProfileCase {
  family: string;
  recording: string;
  requested: string;
  upstreamBody: () => Buffer | string;
  contentType?: string;
  envelope: Pick<StreamIdentity, 'serviceTier' | 'fingerprint'>;
  events: CanonicalEvent[];
  /** usage_start's input_tokens: reported by the provider's first event, else counted locally. */
  startInput: number;
  /** usage_start says its input is sluice's count (true unless the provider's first event reported it). */
  startEstimated?: boolean;
  totals: Totals;
}

function openAIFamilyCase(
  family: string,
  recording: string,
  requested: string,
  registry: [string, string],
  usage: Omit<Totals, 'cost'>,
): ProfileCase {
  return {
    family,
    recording,
    requested,
    upstreamBody: () => openAIStreamBody(recording),
    envelope: openAIEnvelope(recording),
    events: openAIFamilyEvents(recording),
    startInput: COUNTED_INPUT,
    totals: { ...usage, cost: registryPrice(...registry, usage) },
  };
}

const cases: ProfileCase[] = [
  openAIFamilyCase('OpenAI chat', 'openai-chat/gpt4o-mini-text-after-tool.sse', 'openai/gpt-4o-mini', ['openai', 'gpt-4o-mini'], {
    input: 78,
    output: 9,
    cached: 0,
  }),
  // xAI counts reasoning outside completion_tokens (26 + 227); the prompt was served from cache.
  openAIFamilyCase('xAI reasoning, tool call, cache hit', 'xai/chat-grok3-mini-tool-call.jsonl', 'xai/grok-3-mini', ['x-ai', 'grok-3-mini'], {
    input: 307,
    output: 253,
    cached: 306,
  }),
  openAIFamilyCase(
    'DeepSeek reasoning',
    'deepseek/reasoner-reasoning-content.jsonl',
    'deepseek/deepseek-reasoner',
    ['deepseek', 'deepseek-reasoner'],
    { input: 18, output: 219, cached: 0 },
  ),
  openAIFamilyCase(
    'Groq x_groq usage, reasoning and a tool call',
    'groq/gpt-oss-tool-call-reasoning.sse',
    'groq/openai/gpt-oss-120b',
    ['groq', 'openai/gpt-oss-120b'],
    { input: 304, output: 49, cached: 0 },
  ),
  openAIFamilyCase('Mistral', 'mistral/text-small.sse', 'mistral/mistral-small-latest', ['mistral', 'mistral-small-latest'], {
    input: 22,
    output: 8,
    cached: 0,
  }),
  {
    family: 'Google Gemini (thinking tokens are output)',
    recording: 'gemini/text-2.5-flash.sse',
    requested: 'google/gemini-2.5-flash',
    upstreamBody: () => readFixture('gemini/text-2.5-flash.sse'),
    envelope: { serviceTier: null, fingerprint: null },
    events: [
      ...geminiPayloads('gemini/text-2.5-flash.sse').flatMap((p) =>
        p.candidates[0].content.parts.map((part: { text: string }): CanonicalEvent => ({ type: 'text', choice: 0, text: part.text })),
      ),
      { type: 'finish', choice: 0, reason: 'stop' },
    ],
    // The usage of a Gemini chunk comes after its text: not known before the first token.
    startInput: COUNTED_INPUT,
    totals: { input: 8, output: 7 + 20, cached: 0, cost: registryPrice('google', 'gemini-2.5-flash', { input: 8, output: 27, cached: 0 }) },
  },
  {
    family: 'Anthropic Messages',
    recording: 'anthropic/text-sonnet45.jsonl',
    requested: 'anthropic/claude-sonnet-4-5',
    upstreamBody: () => anthropicStreamBody('anthropic/text-sonnet45.jsonl'),
    envelope: { serviceTier: null, fingerprint: null },
    events: [
      ...anthropicPayloads('anthropic/text-sonnet45.jsonl')
        .filter((p) => p.type === 'content_block_delta' && p.delta.type === 'text_delta')
        .map((p): CanonicalEvent => ({ type: 'text', choice: 0, text: p.delta.text })),
      { type: 'finish', choice: 0, reason: 'stop' },
    ],
    // usage_start goes out with message_start, Anthropic's first event, and its input (12; was sluice's count).
    startInput: 12,
    startEstimated: false,
    totals: { input: 12, output: 30, cached: 0, cost: registryPrice('anthropic', 'claude-sonnet-4-5', { input: 12, output: 30, cached: 0 }) },
  },
  {
    family: 'Amazon Bedrock ConverseStream',
    recording: 'bedrock/converse-text-nova-micro.b64',
    requested: 'bedrock/us.amazon.nova-micro-v1:0',
    upstreamBody: () => bedrockBody('bedrock/converse-text-nova-micro.b64'),
    contentType: 'application/vnd.amazon.eventstream',
    envelope: { serviceTier: null, fingerprint: null },
    events: expectedBedrockEvents['bedrock/converse-text-nova-micro.b64'],
    startInput: COUNTED_INPUT,
    totals: {
      input: 13,
      output: 82,
      cached: 0,
      cost: registryPrice('aws', 'us.amazon.nova-micro-v1:0', { input: 13, output: 82, cached: 0 }),
    },
  },
];

/** Fills in what the response decides (id, created), each checked against the test's clock. */
function identityOf(res: { headers: Headers; text: string }, requested: string, envelope: ProfileCase['envelope'], startedAt: number) {
  const id = res.headers.get('x-request-id') ?? '';
  assert.match(id, /^[\w-]{20}$/);
  const created = Number(/"created":(\d+)/.exec(res.text)?.[1]);
  assert.ok(created >= Math.floor(startedAt / 1000) && created <= Date.now() / 1000, `created ${created}`);
  const slash = requested.indexOf('/');
  const s: StreamIdentity = {
    id,
    created,
    requested,
    provider: requested.slice(0, slash),
    model: requested.slice(slash + 1),
    ...envelope,
  };
  return s;
}

/** usage_final's latency_ms, within the time the test waited. */
function latencyOf(text: string, startedAt: number): number {
  const latency = Number(/"latency_ms":(\d+)/.exec(text)?.[1] ?? -1);
  assert.ok(latency >= 0 && latency <= Date.now() - startedAt, `latency_ms ${latency}`);
  return latency;
}

const ACCOUNTING = { 'x-sluice-profile': 'accounting' };
const chatBody = (model: string, extra: object = {}) => ({ model, messages: [{ role: 'user', content: PROMPT }], stream: true, ...extra });

describe('accounting profile, byte for byte', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    const v1 = `${upstream.url}/v1`;
    gw = await startGateway(
      {},
      {
        OPENAI_API_KEY: 'sk-e2e',
        OPENAI_BASE_URL: v1,
        XAI_API_KEY: 'xai-e2e',
        XAI_BASE_URL: v1,
        DEEPSEEK_API_KEY: 'sk-e2e',
        DEEPSEEK_BASE_URL: v1,
        GROQ_API_KEY: 'gsk-e2e',
        GROQ_BASE_URL: v1,
        MISTRAL_API_KEY: 'mistral-e2e',
        MISTRAL_BASE_URL: v1,
        GEMINI_API_KEY: 'AIza-e2e',
        GEMINI_BASE_URL: upstream.url,
        ANTHROPIC_API_KEY: 'sk-ant-e2e',
        ANTHROPIC_BASE_URL: upstream.url,
        AWS_BEARER_TOKEN_BEDROCK: 'bedrock-e2e',
        AWS_REGION: 'us-east-1',
        AWS_ENDPOINT_URL_BEDROCK_RUNTIME: upstream.url,
      },
    );
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  for (const c of cases) {
    it(`${c.family} (${c.recording})`, async () => {
      upstream.reply({
        body: c.upstreamBody(),
        headers: c.contentType ? { 'content-type': c.contentType } : {},
        // Any split of the upstream bytes gives the same body.
        randomSplit: { seed: 42, maxPiece: 97 },
      });
      const startedAt = Date.now();
      // include_usage changes nothing in this profile: usage travels in its own frames.
      const res = await rawStream(gw.url, chatBody(c.requested, { stream_options: { include_usage: true } }), ACCOUNTING);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'text/event-stream');
      const s = identityOf(res, c.requested, c.envelope, startedAt);
      assert.equal(res.text, successBody(s, c.events, c.startInput, c.totals, latencyOf(res.text, startedAt), c.startEstimated));
    });
  }

  it('the mock provider (free: cost 0, its own usage report)', async () => {
    const startedAt = Date.now();
    const res = await rawStream(gw.url, chatBody('mock/echo'), ACCOUNTING);
    const s = identityOf(res, 'mock/echo', { serviceTier: null, fingerprint: 'sluice-mock' }, startedAt);
    const latency = latencyOf(res.text, startedAt);
    const echoed: CanonicalEvent[] = ['You ', 'said: ', PROMPT].map((text) => ({ type: 'text', choice: 0, text }));
    // The mock counts 4 prompt tokens (one word + 3 per message) and one per streamed word.
    assert.equal(
      res.text,
      successBody(s, [...echoed, { type: 'finish', choice: 0, reason: 'stop' }], COUNTED_INPUT, { input: 4, output: 3, cached: 0, cost: 0 }, latency),
    );
  });

  it("usage_start carries the count of Anthropic's message_start, 1169 with the cache write (was: sluice's estimate, 7)", async () => {
    const recording = 'anthropic/prompt-cache-write.sse';
    const start = anthropicPayloads(recording)[0];
    assert.deepEqual([start.message.usage.input_tokens, start.message.usage.cache_creation_input_tokens], [4, 1165]);
    upstream.reply({ body: anthropicStreamBody(recording), randomSplit: { seed: 3, maxPiece: 61 } });
    const res = await rawStream(gw.url, chatBody('anthropic/claude-3-5-sonnet-20240620'), ACCOUNTING);
    const id = res.headers.get('x-request-id') ?? '';
    const s = { id, provider: 'anthropic', model: 'claude-3-5-sonnet-20240620' } as StreamIdentity;
    assert.ok(res.text.startsWith(frames.usageStart(s, 1169, false)), res.text.slice(0, 300));
    const final = JSON.parse(/^event: usage_final\ndata: (.+)$/m.exec(res.text)?.[1] ?? '{}');
    assert.equal(final.input_tokens, 1169);
  });

  it('sends usage_start when the upstream acknowledges, before the first token ("thinking…")', async () => {
    // The upstream sends its first chunk (role only, no text) and then thinks.
    const recording = 'openai-chat/gpt4o-mini-text-after-tool.sse';
    upstream.reply({ pieces: [`data: ${openAIPayloads(recording)[0].data}\n\n`], after: 'hang' });
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(), 5000);
    try {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...ACCOUNTING },
        body: JSON.stringify(chatBody('openai/gpt-4o-mini')),
        signal: controller.signal,
      });
      assert.ok(res.body);
      const reader = res.body.getReader();
      let text = '';
      while (!text.endsWith('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
      const id = res.headers.get('x-request-id');
      assert.equal(text, frames.usageStart({ id, provider: 'openai', model: 'gpt-4o-mini' } as StreamIdentity, COUNTED_INPUT));
    } finally {
      clearTimeout(timeout);
      controller.abort();
    }
  });

  it('sends usage_start with the response headers alone, its input flagged estimated (nothing reported yet)', async () => {
    upstream.reply({ pieces: [], after: 'hang' });
    const controller = new AbortController();
    try {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...ACCOUNTING },
        body: JSON.stringify(chatBody('openai/gpt-4o-mini')),
        signal: controller.signal,
      });
      assert.ok(res.body);
      const reader = res.body.getReader();
      let text = '';
      while (!text.endsWith('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
      const id = res.headers.get('x-request-id');
      assert.equal(text, frames.usageStart({ id, provider: 'openai', model: 'gpt-4o-mini' } as StreamIdentity, COUNTED_INPUT));
    } finally {
      controller.abort();
    }
  });

  it('an upstream failure after usage_start (accepted, then the connection reset): an error frame, not an HTTP error', async () => {
    upstream.reply({ pieces: [], after: 'reset' });
    const res = await rawStream(gw.url, chatBody('openai/gpt-4o-mini'), ACCOUNTING);
    assert.equal(res.status, 200);
    const kinds = res.text
      .split('\n\n')
      .filter(Boolean)
      .map((frame) => {
        const data = /^data: (.+)$/m.exec(frame)?.[1] ?? '';
        return /^event: (.+)$/m.exec(frame)?.[1] ?? (data === '[DONE]' ? data : JSON.parse(data).type);
      });
    assert.deepEqual(kinds, ['usage_start', 'error', '[DONE]']);
    // The default openai profile keeps answering such an early failure as an HTTP error.
    upstream.reply({ pieces: [], after: 'reset' });
    const plain = await rawStream(gw.url, chatBody('openai/gpt-4o-mini'));
    assert.equal(plain.status, 502);
  });

  it('an upstream error event after output: the error frame in place of usage_final, then [DONE]', async () => {
    const recording = 'groq/midstream-error-tool-use-failed.sse';
    upstream.reply({ body: openAIStreamBody(recording), randomSplit: { seed: 7, maxPiece: 200 } });
    const startedAt = Date.now();
    const res = await rawStream(gw.url, chatBody('groq/openai/gpt-oss-120b'), ACCOUNTING);
    assert.equal(res.status, 200);
    const s = identityOf(res, 'groq/openai/gpt-oss-120b', openAIEnvelope(recording), startedAt);
    const upstreamError = JSON.parse(openAIPayloads(recording).at(-1)?.data ?? '{}').error;
    assert.match(upstreamError.message, /^Tool call validation failed/);
    const soFar = await soFarOf(gw, res, startedAt);
    assert.equal(soFar.input, COUNTED_INPUT);
    // The upstream answered 200 (its in-stream status_code 400 is what the error stands for).
    const said = { status: 200, type: 'invalid_request_error', code: 'tool_use_failed' };
    assert.equal(
      res.text,
      frames.usageStart(s, COUNTED_INPUT) +
        contentFrames(s, openAIFamilyEvents(recording)) +
        // The profile's finish vocabulary has `error`: the choice the failure cut short finishes so.
        frames.finish(s, 'error') +
        frames.error(s, upstreamError.message, 'invalid_request', soFar, said) +
        DONE,
    );
  });

  it('an upstream finish_reason "error": finish "error", then the error frame in place of usage_final (was: stop, then usage_final)', async () => {
    const recording = 'openai-chat/gpt4o-mini-text-after-tool.sse';
    const payloads = openAIPayloads(recording).map((p) => p.data);
    // The role chunk and two deltas, then OpenRouter's way of saying the generation failed.
    const failed = payloads[1].replace(/"content":"[^"]*"/, '"content":""').replace('"finish_reason":null', '"finish_reason":"error"');
    upstream.reply({ pieces: [...payloads.slice(0, 3), failed, '[DONE]'].map((d) => `data: ${d}\n\n`) });
    const startedAt = Date.now();
    const res = await rawStream(gw.url, chatBody('openai/gpt-4o-mini'), ACCOUNTING);
    const s = identityOf(res, 'openai/gpt-4o-mini', openAIEnvelope(recording), startedAt);
    const soFar = await soFarOf(gw, res, startedAt);
    const said = JSON.parse(payloads[2]).choices[0].delta.content;
    const words: CanonicalEvent[] = [JSON.parse(payloads[1]).choices[0].delta.content, said].map((text) => ({ type: 'text', choice: 0, text }));
    assert.equal(
      res.text,
      frames.usageStart(s, COUNTED_INPUT) +
        contentFrames(s, words) +
        frames.finish(s, 'error') +
        frames.error(s, 'openai ended the generation with finish_reason "error".', 'upstream_error', soFar, {
          status: 200,
          type: null,
          code: null,
        }) +
        DONE,
    );
    const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.equal(row.outcome, 'error');
  });

  it('a sluice-side failure after output (mock/error): the same error frame', async () => {
    const startedAt = Date.now();
    const res = await rawStream(gw.url, chatBody('mock/error'), ACCOUNTING);
    const s = identityOf(res, 'mock/error', { serviceTier: null, fingerprint: 'sluice-mock' }, startedAt);
    const words: CanonicalEvent[] = ['This ', 'answer ', 'will ', 'not ', 'finish'].map((text) => ({ type: 'text', choice: 0, text }));
    const soFar = await soFarOf(gw, res, startedAt);
    assert.equal(
      res.text,
      frames.usageStart(s, COUNTED_INPUT) +
        contentFrames(s, words) +
        frames.finish(s, 'error') +
        frames.error(s, 'The mock provider failed mid-stream, as mock/error always does.', 'upstream_error', soFar, {
          status: null,
          type: null,
          code: 'mock_failure',
        }) +
        DONE,
    );
  });
});

describe('accounting profile chosen in the config', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ stream: { profile: 'accounting' } });
  });
  after(async () => {
    await gw.close();
  });

  it('applies stream.profile: accounting without a header', async () => {
    const startedAt = Date.now();
    const res = await rawStream(gw.url, chatBody('mock/echo'));
    const s = identityOf(res, 'mock/echo', { serviceTier: null, fingerprint: 'sluice-mock' }, startedAt);
    const latency = latencyOf(res.text, startedAt);
    const echoed: CanonicalEvent[] = ['You ', 'said: ', PROMPT].map((text) => ({ type: 'text', choice: 0, text }));
    assert.equal(
      res.text,
      successBody(s, [...echoed, { type: 'finish', choice: 0, reason: 'stop' }], COUNTED_INPUT, { input: 4, output: 3, cached: 0, cost: 0 }, latency),
    );
  });

  it('lets a request ask for the plain openai profile with X-Sluice-Profile: openai', async () => {
    const res = await rawStream(gw.url, chatBody('mock/echo'), { 'x-sluice-profile': 'openai' });
    assert.ok(res.text.startsWith('data: {"id":"chatcmpl-'));
    assert.ok(!/usage_start|usage_final|"type":|response\.done|cost_usd/.test(res.text));
    assert.ok(res.text.endsWith(DONE));
  });
});

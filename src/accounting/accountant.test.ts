import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { errors } from '../errors/catalog.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import { parseChatRequest } from '../surfaces/chat/parse-request.ts';
import { chatToCanonical } from '../surfaces/chat/to-canonical.ts';
import { Accountant, type AccountantInit, rejectedRecord } from './accountant.ts';
import { countTextTokens } from './count-tokens.ts';
import { PricingRegistry } from './pricing.ts';
import { BACKGROUND_AFTER_CHARS, DEFAULT_LIMITS } from './token-tally.ts';

const QUESTION = 'What is the capital of France? Answer in one word, please. Ünïcödé 日本語 👋';
const SYSTEM = 'You are terse.';

function chatRequest(model = 'gpt-4o-mini') {
  return chatToCanonical(
    parseChatRequest({
      model: `openai/${model}`,
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: QUESTION },
      ],
      stream: true,
    }),
  );
}

/** An accountant on a clock the test moves by hand. */
function accountant(overrides: Partial<AccountantInit> = {}) {
  const clock = { t: 1_000 };
  const model = overrides.model ?? 'gpt-4o-mini';
  const a = new Accountant({
    requestId: 'req_1',
    keyId: null,
    provider: 'openai',
    model,
    requestedModel: `openai/${model}`,
    surface: 'chat',
    streamed: true,
    request: chatRequest(model),
    pricing: new PricingRegistry(),
    storeContentChars: 0,
    now: () => clock.t,
    ...overrides,
  });
  return { a, clock };
}

const text = (t: string): CanonicalEvent => ({ type: 'text', choice: 0, text: t });
const usage = (inputTokens: number, outputTokens: number, extra: object = {}): CanonicalEvent => ({
  type: 'usage',
  usage: { inputTokens, outputTokens, source: 'provider', ...extra },
});
const finish: CanonicalEvent = { type: 'finish', choice: 0, reason: 'stop', rawReason: 'stop' };

/** OpenAI's counting recipe: 3 tokens per message, 3 to prime the reply, plus the texts. */
const promptTokens = (count: (s: string) => number) => 3 + 2 * 3 + count(SYSTEM) + count(QUESTION);

describe('Accountant', () => {
  it('times TTFT from the first output event, not from start or usage', async () => {
    const { a, clock } = accountant();
    clock.t = 1_040;
    a.observe({ type: 'start', upstreamModel: 'gpt-4o-mini' });
    clock.t = 1_090;
    a.observe(usage(10, 0));
    clock.t = 1_250;
    a.observe({ type: 'tool-call-start', choice: 0, index: 0, id: 'call_1', name: 'f' });
    clock.t = 1_400;
    a.observe(text('later'));
    a.observe(finish);
    clock.t = 1_900;
    const record = await a.finalize(null);
    assert.equal(record.ttftMs, 250);
    assert.equal(record.latencyMs, 900);
    assert.equal(record.createdAt, 1_000);
  });

  it('has no TTFT when nothing was output', async () => {
    const { a, clock } = accountant();
    a.markAcknowledged();
    a.observe({ type: 'start', upstreamModel: 'gpt-4o-mini' });
    clock.t = 1_300;
    const record = await a.finalize(errors.cancelled('The client closed the connection.'));
    assert.equal(record.ttftMs, null);
    assert.equal(record.latencyMs, 300);
  });

  it('uses the provider usage when there is one: the last usage event wins', async () => {
    const { a } = accountant();
    a.markAcknowledged();
    a.observe(usage(20, 1));
    a.observe(text('Paris'));
    a.observe(finish);
    a.observe(usage(20, 2, { cachedInputTokens: 8, reasoningTokens: 1 }));
    assert.equal(await a.inputTokens(), 20);
    const record = await a.finalize(null);
    const expectedCost = new PricingRegistry().cost('openai', 'gpt-4o-mini', {
      inputTokens: 20,
      outputTokens: 2,
      cachedInputTokens: 8,
      reasoningTokens: 1,
      source: 'provider',
    }).costUsd;
    assert.deepEqual(record, {
      requestId: 'req_1',
      createdAt: 1_000,
      keyId: null,
      projectId: null,
      provider: 'openai',
      model: 'gpt-4o-mini',
      requestedModel: 'openai/gpt-4o-mini',
      surface: 'chat',
      streamed: true,
      inputTokens: 20,
      cachedInputTokens: 8,
      cacheWriteTokens: 0,
      outputTokens: 2,
      reasoningTokens: 1,
      // Not reported by this upstream: null, not 0.
      audioInputTokens: null,
      audioOutputTokens: null,
      acceptedPredictionTokens: null,
      rejectedPredictionTokens: null,
      usageSource: 'provider',
      costUsd: expectedCost,
      priceKnown: true,
      ttftMs: 0,
      latencyMs: 0,
      upstreamStatus: 200,
      outcome: 'ok',
      errorType: null,
      errorCode: null,
      errorMessage: null,
      finishReason: 'stop',
      prompt: null,
      completion: null,
      upstreamErrorType: null,
      upstreamErrorCode: null,
    });
    assert.ok(expectedCost > 0);
  });

  it('keeps the audio and prediction details in the record, and prices the audio', async () => {
    const { a } = accountant();
    a.markAcknowledged();
    a.observe(text('Paris'));
    a.observe(finish);
    const details = { audioInputTokens: 6, audioOutputTokens: 1, acceptedPredictionTokens: 1, rejectedPredictionTokens: 0 };
    a.observe(usage(20, 2, details));
    const record = await a.finalize(null);
    assert.deepEqual(
      [record.audioInputTokens, record.audioOutputTokens, record.acceptedPredictionTokens, record.rejectedPredictionTokens],
      [6, 1, 1, 0],
    );
    const cost = new PricingRegistry().cost('openai', 'gpt-4o-mini', { inputTokens: 20, outputTokens: 2, source: 'provider', ...details });
    assert.equal(record.costUsd, cost.costUsd);
  });

  it('gives usage_start the input reported before the first output, else the local count', async () => {
    // Anthropic-style: input reported at message_start, before any text.
    const early = accountant();
    early.a.observe(usage(42, 1));
    assert.equal(await early.a.inputTokens(), 42);
    early.a.observe(text('Paris'));
    early.a.observe(usage(43, 5));
    assert.equal(await early.a.inputTokens(), 42);
    // OpenAI-style: usage only after the text, even if it was read in the same network read.
    const late = accountant();
    late.a.observe(text('Paris'));
    late.a.observe(usage(20, 1));
    assert.equal(await late.a.inputTokens(), promptTokens(o200k));
    assert.equal((await late.a.usage()).inputTokens, 20);
  });

  it('counts locally with the o200k BPE when the upstream reports no usage, and says estimated', async () => {
    const { a } = accountant();
    // Input is known before the first token, for usage_start.
    assert.equal(await a.inputTokens(), promptTokens(o200k));
    a.markAcknowledged();
    const answer = ['The capital', ' of France is', ' **Paris**. 🇫🇷'];
    for (const t of answer) a.observe(text(t));
    a.observe({ type: 'reasoning', choice: 0, text: ' thinking…' });
    a.observe(finish);
    const u = await a.usage();
    assert.deepEqual(u, {
      inputTokens: promptTokens(o200k),
      outputTokens: o200k(`${answer.join('')} thinking…`),
      source: 'estimated',
    });
    const record = await a.finalize(null);
    assert.equal(record.usageSource, 'estimated');
    assert.equal(record.inputTokens, u.inputTokens);
    assert.equal(record.outputTokens, u.outputTokens);
    assert.equal(record.costUsd, new PricingRegistry().cost('openai', 'gpt-4o-mini', u).costUsd);
  });

  it('counts an input that is not a chat prompt its own way (embeddings), for the model answering, and says estimated', async () => {
    const asked: string[] = [];
    const { a } = accountant({
      surface: 'embeddings',
      countInput: async (model) => {
        asked.push(model);
        return 3;
      },
    });
    a.markAcknowledged();
    a.observe({
      type: 'fallback',
      from: { provider: 'openai', model: 'gpt-4o-mini' },
      to: { provider: 'google', model: 'gemini-embedding-001' },
      reason: 'upstream_overloaded',
    });
    assert.deepEqual(await a.usage(), { inputTokens: 3, outputTokens: 0, source: 'estimated' });
    assert.deepEqual(asked, ['gemini-embedding-001']);
  });

  it('counts gpt-3.5 / gpt-4 with cl100k, and tool calls by name and arguments', async () => {
    const { a } = accountant({ model: 'gpt-3.5-turbo-0125' });
    a.observe({ type: 'tool-call-start', choice: 0, index: 0, id: 'call_1', name: 'get_current_weather' });
    a.observe({ type: 'tool-call-delta', choice: 0, index: 0, arguments: '{"location": "Boston, MA"}' });
    a.observe({ type: 'finish', choice: 0, reason: 'tool_calls', rawReason: 'tool_calls' });
    const u = await a.usage();
    assert.equal(u.inputTokens, promptTokens(cl100k));
    assert.equal(u.outputTokens, cl100k('get_current_weather{"location": "Boston, MA"}'));
    assert.notEqual(promptTokens(cl100k), promptTokens(o200k));
  });

  it('picks the encoding by model family, Azure and router names included', async () => {
    const sample = 'Ünïcödé 日本語 — tokens differ between encodings 👋';
    assert.notEqual(cl100k(sample), o200k(sample));
    const cl = ['gpt-3.5-turbo', 'gpt-35-turbo', 'gpt-4', 'gpt-4-turbo', 'openai/gpt-4-0613'];
    const o2 = ['gpt-4o', 'gpt-4.1-nano', 'gpt-5', 'o3-mini', 'claude-sonnet-4-5', 'openai/gpt-4o'];
    for (const m of cl) assert.equal(await countTextTokens(sample, m), cl100k(sample), m);
    for (const m of o2) assert.equal(await countTextTokens(sample, m), o200k(sample), m);
  });

  it('does not trust a usage report from before the end when the stream never finished', async () => {
    // Anthropic's message_start reports output_tokens: 1; a stream cut later has produced more.
    const { a } = accountant({ provider: 'anthropic', model: 'claude-sonnet-4-5' });
    a.markAcknowledged();
    a.observe(usage(42, 1, { cachedInputTokens: 30 }));
    const partial = 'A long answer that was cut off in the middle of its second sentence, when the';
    a.observe(text(partial));
    const record = await a.finalize(errors.idleTimeout(5));
    assert.equal(record.inputTokens, 42);
    assert.equal(record.cachedInputTokens, 30);
    assert.equal(record.outputTokens, o200k(partial));
    assert.equal(record.usageSource, 'estimated');
  });

  it('records the outcome and error of each ending', async () => {
    const ending = async (error: GatewayError | null, acknowledged: boolean) => {
      const { a } = accountant();
      if (acknowledged) {
        a.markAcknowledged();
        a.observe(text('Par'));
      }
      const r = await a.finalize(error);
      // Only a request the upstream accepted has tokens (here estimated) and a cost.
      if (acknowledged) assert.ok(r.inputTokens > 0 && r.outputTokens === 1 && r.costUsd > 0 && r.usageSource === 'estimated');
      else assert.deepEqual([r.inputTokens, r.outputTokens, r.costUsd, r.usageSource], [0, 0, 0, 'provider']);
      return [r.outcome, r.upstreamStatus, r.errorType, r.errorCode, r.errorMessage];
    };
    const rateLimited = new GatewayError({
      code: 'rate_limit_exceeded',
      status: 429,
      type: 'rate_limit_error',
      message: 'Rate limit reached for gpt-4o-mini',
      upstreamStatus: 429,
      provider: 'openai',
    });
    assert.deepEqual(await ending(null, true), ['ok', 200, null, null, null]);
    assert.deepEqual(await ending(rateLimited, false), [
      'error',
      429,
      'rate_limit_error',
      'rate_limit_exceeded',
      'Rate limit reached for gpt-4o-mini',
    ]);
    // A failure after the upstream answered 200 and no status of its own.
    assert.deepEqual(await ending(errors.truncated('openai'), true), [
      'error',
      200,
      'upstream_error',
      'upstream_stream_truncated',
      'The openai stream ended before a finish_reason was sent.',
    ]);
    assert.deepEqual(await ending(errors.idleTimeout(2), true), [
      'error',
      200,
      'stream_idle_timeout',
      'stream_idle_timeout',
      'No data from the upstream for 2s; the stream was ended.',
    ]);
    assert.deepEqual(await ending(errors.cancelled('The client closed the connection.'), false), [
      'cancelled',
      null,
      'cancelled',
      'cancelled',
      'The client closed the connection.',
    ]);
    assert.deepEqual(await ending(errors.connection('openai', 'ECONNREFUSED'), false), [
      'error',
      null,
      'upstream_error',
      'upstream_connection_error',
      'Could not complete the request to openai: ECONNREFUSED',
    ]);
  });

  it('keeps the first finish reason', async () => {
    const { a } = accountant();
    a.observe({ type: 'finish', choice: 0, reason: 'length', rawReason: 'max_tokens' });
    a.observe(finish);
    assert.equal((await a.finalize(null)).finishReason, 'length');
  });

  it('stores prompt and completion only when asked, capped to the configured size', async () => {
    const none = accountant();
    none.a.observe(text('Paris'));
    const plain = await none.a.finalize(null);
    assert.equal(plain.prompt, null);
    assert.equal(plain.completion, null);

    const capped = accountant({ storeContentChars: 20 });
    capped.a.observe(text('The capital of France is Paris.'));
    const r = await capped.a.finalize(null);
    assert.equal(r.prompt, `${SYSTEM}\n${QUESTION}`.slice(0, 20));
    assert.equal(r.completion, 'The capital of Franc');

    const roomy = accountant({ storeContentChars: 10_000 });
    roomy.a.observe(text('Paris.'));
    const whole = await roomy.a.finalize(null);
    assert.equal(whole.prompt, `${SYSTEM}\n${QUESTION}`);
    assert.equal(whole.completion, 'Paris.');
  });

  it('tells the durable journal its admission and its progress, the same object while nothing happened', () => {
    const { a, clock } = accountant({ keyId: 'k1', projectId: 'p1' });
    const holds = { slots: [{ subject: 'key:k1', limit: 2 }] };
    assert.deepEqual(a.admitted(40, holds), {
      requestId: 'req_1',
      createdAt: 1_000,
      keyId: 'k1',
      projectId: 'p1',
      provider: 'openai',
      model: 'gpt-4o-mini',
      requestedModel: 'openai/gpt-4o-mini',
      surface: 'chat',
      streamed: true,
      promptTokens: 40,
      holds,
    });
    const before = a.progress();
    assert.deepEqual(before, {
      requestId: 'req_1',
      at: 1_000,
      provider: 'openai',
      model: 'gpt-4o-mini',
      acknowledged: false,
      firstOutputAt: null,
      outputTokens: 0,
      reported: null,
    });
    clock.t = 1_200;
    assert.equal(a.progress(), before, 'unchanged: no new line to write');
    a.markAcknowledged();
    a.observe(usage(25, 1));
    clock.t = 1_300;
    a.observe(text('Paris is the capital.'));
    const after = a.progress();
    assert.deepEqual(
      { ...after, reported: after.reported?.inputTokens },
      { ...before, at: 1_300, acknowledged: true, firstOutputAt: 1_300, outputTokens: Math.ceil(21 / 4), reported: 25 },
    );
  });

  it('makes a record for a request refused before any provider', () => {
    const error = errors.modelNotFound('nope/x', "no provider named 'nope'");
    const r = rejectedRecord('req_9', error, 'chat', 'nope/x', 5_000, { keyId: 'k1', projectId: 'proj_1' }, 5_012);
    assert.deepEqual(
      { ...r },
      {
        requestId: 'req_9',
        createdAt: 5_000,
        keyId: 'k1',
        projectId: 'proj_1',
        provider: '',
        model: '',
        requestedModel: 'nope/x',
        surface: 'chat',
        streamed: false,
        inputTokens: 0,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 0,
        reasoningTokens: 0,
        usageSource: 'provider',
        costUsd: 0,
        priceKnown: true,
        ttftMs: null,
        latencyMs: 12,
        upstreamStatus: null,
        outcome: 'error',
        errorType: 'invalid_request_error',
        errorCode: 'model_not_found',
        errorMessage: error.message,
        finishReason: null,
        prompt: null,
        completion: null,
        upstreamErrorType: null,
        upstreamErrorCode: null,
      },
    );
  });
});

describe('Accountant: local counts are bounded ("[DONE] waits minutes on the local token count")', () => {
  /** Lowercase letters without a break: ~3-9 us a character for the BPE, the slowest text. */
  const unbroken = (length: number) => {
    let s = '';
    for (let i = 0, x = 1; i < length; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      s += String.fromCharCode(0x61 + ((x >>> 16) % 26));
    }
    return s;
  };

  it('counts a long output as it arrives, exactly', async () => {
    // A wait no busy test machine runs out: this test is about exactness, the next about the bound.
    const { a } = accountant({ countLimits: { ...DEFAULT_LIMITS, waitMs: 60_000 } });
    a.markAcknowledged();
    const sentence = 'The quick brown fox, 42 times over the lazy dog — Ünïcödé 日本語 👋.\n';
    const answer = Array.from({ length: 1200 }, (_, i) => `${i}. ${sentence}`).join('');
    assert.ok(answer.length > 2 * BACKGROUND_AFTER_CHARS, 'counted ahead');
    for (let i = 0; i < answer.length; i += 9) a.observe(text(answer.slice(i, i + 9)));
    a.observe(finish);
    assert.equal((await a.usage()).outputTokens, o200k(answer));
  });

  it('never waits past the signal: what is not counted yet is estimated, and the record agrees', async () => {
    const { a } = accountant();
    a.markAcknowledged();
    const answer = unbroken(512 * 1024);
    a.observe(text(answer));
    a.observe(finish);
    const started = performance.now();
    const u = await a.usage(AbortSignal.abort());
    assert.ok(performance.now() - started < 500, 'no wait for a deadline already past');
    assert.equal(u.source, 'estimated');
    assert.ok(u.outputTokens >= answer.length / 4 && u.outputTokens <= answer.length, `${u.outputTokens}`);
    assert.equal((await a.finalize(null)).outputTokens, u.outputTokens);
  });

  it('counts a prompt with text that looks like a special token as text (it used to kill the counter)', async () => {
    const prompt = 'Repeat after me: <|endoftext|> and <|im_start|>';
    const request = chatToCanonical(parseChatRequest({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: prompt }] }));
    const { a } = accountant({ request });
    const asText = o200k(prompt, { disallowedSpecial: new Set() });
    assert.equal(await a.inputTokens(), 3 + 3 + asText);
    assert.equal(await countTextTokens('and on', 'gpt-4o-mini'), o200k('and on'), 'the counter lives on');
  });
});

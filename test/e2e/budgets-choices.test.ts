import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FakeUpstream, type RecordedRequest, startFakeUpstream, type UpstreamReply } from '../helpers/fake-upstream.ts';
import { parseSse, requestRecord, startGateway, type TestGateway, upstreamConfig } from '../helpers/gateway.ts';
import { post, speakAsTestCallers } from './limits-support.ts';
import { observe } from '../helpers/observe.ts';

const MODEL = 'up/gpt-test';
const CLAUDE = 'anthropic/claude-sonnet-4-5';
/**
 * $1 in and $10 out a million tokens: a $0.01 budget pays for the 7-token prompt ('Hi', estimated)
 * and 999 tokens of output.
 */
const PRICES = { input_mtok: 1, output_mtok: 10 };
const BUDGET_USD = 0.01;
const JSON_HEADERS = { 'content-type': 'application/json' };
/** 'tokens. ' is 2 tokens in 8 bytes, as a budget's stop prices output (one token per 4 bytes). */
const PIECE = 'tokens. ';

/** A chat stream of `n` choices taking turns, `pieces` each, one frame a piece. */
function chatChoicesSse(n: number, pieces: number): string[] {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'gpt-test', choices, ...extra })}\n\n`;
  const frames = [chunk(Array.from({ length: n }, (_, index) => ({ index, delta: { role: 'assistant', content: '' }, finish_reason: null })))];
  for (let i = 0; i < pieces; i++) {
    for (let index = 0; index < n; index++) frames.push(chunk([{ index, delta: { content: PIECE }, finish_reason: null }]));
  }
  frames.push(chunk(Array.from({ length: n }, (_, index) => ({ index, delta: {}, finish_reason: 'length' }))));
  frames.push(chunk([], { usage: { prompt_tokens: 7, completion_tokens: n * pieces * 2, total_tokens: 7 + n * pieces * 2 } }));
  return [...frames, 'data: [DONE]\n\n'];
}

/**
 * An upstream whose every choice is as long as it is let be: `n` choices of the output limit it
 * was sent (4,096 tokens without one), honestly reported in its usage; a stream of long choices.
 */
function longAnswers(req: RecordedRequest): UpstreamReply {
  const body = req.json as { n?: number; stream?: boolean; max_completion_tokens?: number; max_tokens?: number };
  const n = body.n ?? 1;
  if (body.stream) return { pieces: chatChoicesSse(n, 150), delayMs: 1 };
  const limit = body.max_completion_tokens ?? body.max_tokens ?? 4096;
  const choices = Array.from({ length: n }, (_, index) => ({
    index,
    message: { role: 'assistant', content: PIECE.repeat(Math.ceil(limit / 2)) },
    finish_reason: 'length',
  }));
  const usage = { prompt_tokens: 7, completion_tokens: n * limit, total_tokens: 7 + n * limit };
  return {
    headers: JSON_HEADERS,
    body: JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion', created: 1, model: 'gpt-test', choices, usage }),
  };
}

describe('regression: n multiplies a budget', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    upstream.reply(longAnswers);
    gw = await startGateway(
      { ...upstreamConfig(upstream.url), pricing: { [MODEL]: PRICES, [CLAUDE]: PRICES } },
      { ANTHROPIC_API_KEY: 'sk-ant-e2e', ANTHROPIC_BASE_URL: upstream.url },
    );
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: BUDGET_USD }]);
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  const ask = (extra: Record<string, unknown>) => ({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], ...extra });

  for (const n of [8, 64]) {
    it(`n=${n}, not streamed: every choice is capped to its share, and requests until the refusal spend within the $0.01 budget`, async () => {
      let spent = 0;
      const statuses: number[] = [];
      for (let i = 0; i < 10 && statuses.at(-1) !== 429; i++) {
        const sentBefore = upstream.requests.length;
        const res = await post(gw, ask({ n }), { 'x-test-key': `unstreamed-${n}` });
        statuses.push(res.status);
        const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
        spent += row.cost_usd;
        if (res.status === 429) {
          assert.equal(JSON.parse(res.text).error.code, 'insufficient_quota');
          assert.equal(upstream.requests.length, sentBefore, 'a refused request is not sent');
          assert.equal(row.cost_usd, 0);
          continue;
        }
        const sent = upstream.requests.at(-1)?.json as Record<string, number>;
        assert.equal(sent.n, n);
        // All the choices' output fits what the first request reserved: 999 tokens in all.
        if (i === 0) assert.equal(sent.max_completion_tokens, Math.floor(999 / n));
        assert.equal(JSON.parse(res.text).choices.length, n);
      }
      assert.equal(statuses[0], 200);
      assert.equal(statuses.at(-1), 429);
      observe({ kind: 'spend', case: `n=${n}, not streamed, until refused`, spentUsd: spent, limitUsd: BUDGET_USD, allowedUsd: BUDGET_USD });
      assert.ok(spent <= BUDGET_USD + 1e-12, `spent $${spent} of $${BUDGET_USD}`);
    });
  }

  it('n=8, streamed: the stream of 8 long choices is stopped when all of them together reach the budget', async () => {
    const res = await post(gw, ask({ n: 8, stream: true }), { 'x-test-key': 'streamed-8' });
    assert.equal(res.status, 200);
    const frames = parseSse(res.text).frames;
    assert.equal(frames.at(-1)?.data, '[DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data) as { choices: { index: number; delta: { content?: string } }[] });
    const indexes = new Set(chunks.flatMap((c) => c.choices.filter((choice) => choice.delta.content).map((choice) => choice.index)));
    assert.equal(indexes.size, 8, 'every choice streamed');
    const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.equal(row.finish_reason, 'budget_exhausted');
    observe({ kind: 'spend', case: 'n=8, streamed', spentUsd: row.cost_usd, limitUsd: BUDGET_USD, allowedUsd: BUDGET_USD });
    assert.ok(row.cost_usd <= BUDGET_USD, `spent $${row.cost_usd} of $${BUDGET_USD}`);
    // Less than the least cost of a request of 8 choices is left.
    const next = await post(gw, ask({ n: 8, stream: true }), { 'x-test-key': 'streamed-8' });
    assert.equal(next.status, 429);
  });
});

describe('regression: a budget with less left than the least cost answered 200 with empty content', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    upstream.reply(longAnswers);
    gw = await startGateway(
      { ...upstreamConfig(upstream.url), pricing: { [MODEL]: PRICES, [CLAUDE]: PRICES } },
      { ANTHROPIC_API_KEY: 'sk-ant-e2e', ANTHROPIC_BASE_URL: upstream.url },
    );
    // $0.00002 = 20,000 nano-dollars: the prompt (7,000) and a token of output (10,000) fit, two do not.
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 0.00002 }]);
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  /** POSTs `body` to `path` as a fresh key; the answer must be the refusal, nothing sent and nothing spent. */
  async function refused(path: string, body: Record<string, unknown>, key: string) {
    const sentBefore = upstream.requests.length;
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'x-test-key': key },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    assert.equal(upstream.requests.length, sentBefore, `${path}: nothing is sent upstream`);
    const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.deepEqual([row.cost_usd, row.usage.input_tokens, row.usage.output_tokens], [0, 0, 0], `${path}: nothing is spent`);
    return { status: res.status, headers: res.headers, body: JSON.parse(text) as Record<string, any> };
  }

  const hi = { messages: [{ role: 'user', content: 'Hi' }] };

  it('chat, streamed or not (n=2 needs two tokens of output): 429 insufficient_quota in the OpenAI shape', async () => {
    for (const [key, body] of [
      ['chat-streamed', { model: MODEL, ...hi, n: 2, stream: true }],
      ['chat-whole', { model: MODEL, ...hi, n: 2 }],
    ] as const) {
      const res = await refused('/v1/chat/completions', body, key);
      assert.equal(res.status, 429);
      assert.equal(res.headers.get('x-should-retry'), 'false');
      assert.deepEqual(Object.keys(res.body.error).sort(), ['code', 'message', 'param', 'type']);
      assert.equal(res.body.error.code, 'insufficient_quota');
      assert.match(res.body.error.message, /has \$0\.00002 left \(\$0 spent\), less than this request's least cost of \$0\.000027/);
    }
  });

  it('responses and messages: the same refusal, in each surface shape', async () => {
    // A stream's least cost is its prompt and one token of output: a 12,000 budget holds the prompt, not the token.
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 0.000012 }]);
    const responses = await refused('/v1/responses', { model: MODEL, input: 'Hi', stream: true }, 'responses');
    assert.equal(responses.status, 429);
    assert.equal(responses.body.error.code, 'insufficient_quota');
    const messages = await refused('/v1/messages', { model: CLAUDE, max_tokens: 100, stream: true, ...hi }, 'messages');
    // Anthropic's name for a spent quota, with its status (protocol/anthropic-errors.ts).
    assert.equal(messages.status, 402);
    assert.deepEqual(Object.keys(messages.body), ['type', 'error']);
    assert.equal(messages.body.error.type, 'billing_error');
    assert.match(messages.body.error.message, /^You exceeded your current quota/);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFixture } from '../helpers/fixtures.ts';
import { parseSse, rawStream, requestRecord, upstreamConfig, useUpstreamGateway } from '../helpers/gateway.ts';

// Usage details (shared/reference/chat-streaming-full.txt "Usage Reporting"): audio tokens and
// Predicted Outputs' accepted/rejected tokens are kept in the usage chunk, the non-stream
// response, the ledger row and the cost.

/** Hand-made (no recording has non-zero counts): an audio model's answer to a Predicted Outputs request. */
const DETAILED_USAGE = {
  prompt_tokens: 120,
  completion_tokens: 90,
  total_tokens: 210,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 80 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 60, accepted_prediction_tokens: 12, rejected_prediction_tokens: 5 },
};

const envelope = { id: 'chatcmpl-d', object: 'chat.completion.chunk', created: 1, model: 'gpt-audio' };
const chunk = (delta: object, finish: string | null = null, usage: object | null = null) =>
  `data: ${JSON.stringify({ ...envelope, choices: [{ index: 0, delta, finish_reason: finish }], usage })}\n\n`;
const detailedStream =
  chunk({ role: 'assistant', content: 'Hi' }) +
  chunk({}, 'stop') +
  `data: ${JSON.stringify({ ...envelope, choices: [], usage: DETAILED_USAGE })}\n\n` +
  'data: [DONE]\n\n';
const detailedCompletion = {
  id: 'chatcmpl-d',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-audio',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
  usage: DETAILED_USAGE,
};

const SSE = { 'content-type': 'text/event-stream' };
const JSON_TYPE = { 'content-type': 'application/json' };
const request = (stream: boolean) => ({
  model: 'up/gpt-audio',
  messages: [{ role: 'user', content: 'Hi' }],
  stream,
  ...(stream ? { stream_options: { include_usage: true } } : {}),
});

/** The usage chunk's usage of a raw chat stream. */
function streamedUsage(text: string): Record<string, unknown> | undefined {
  return parseSse(text)
    .frames.filter((f) => f.data !== '[DONE]')
    .map((f) => JSON.parse(f.data))
    .find((c) => Array.isArray(c.choices) && c.choices.length === 0)?.usage;
}

describe('usage details: audio and Predicted Outputs tokens', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ config: upstreamConfig(url) }));

  it('the usage chunk and the ledger row keep them (hand-made upstream)', async () => {
    upstream.reply({ headers: SSE, body: detailedStream });
    const res = await rawStream(gw.url, request(true));
    assert.equal(res.status, 200);
    assert.deepEqual(streamedUsage(res.text), DETAILED_USAGE);
    const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.deepEqual(
      [row.usage.audio_input_tokens, row.usage.audio_output_tokens, row.usage.accepted_prediction_tokens, row.usage.rejected_prediction_tokens],
      [80, 60, 12, 5],
    );
  });

  it('the non-stream response keeps them', async () => {
    upstream.reply({ headers: JSON_TYPE, body: JSON.stringify(detailedCompletion) });
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: JSON_TYPE, body: JSON.stringify(request(false)) });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { usage: unknown };
    assert.deepEqual(body.usage, DETAILED_USAGE);
  });

  it('an OpenAI recording carrying them (all 0) keeps them in the usage chunk and the row', async () => {
    upstream.reply({ headers: SSE, body: readFixture('openai-chat/gpt4o-mini-text-after-tool.sse') });
    const res = await rawStream(gw.url, { ...request(true), model: 'up/gpt-4o-mini' });
    const usage = streamedUsage(res.text) as Record<string, any>;
    assert.deepEqual(usage.prompt_tokens_details, { cached_tokens: 0, audio_tokens: 0 });
    assert.deepEqual(usage.completion_tokens_details, {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    });
    const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.equal(row.usage.audio_input_tokens, 0);
    assert.equal(row.usage.rejected_prediction_tokens, 0);
  });
});

describe('usage details: the cost', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ config: { providers: { openai: { base_url: `${url}/v1`, api_key: 'sk-upstream' } } } }));

  it("prices audio tokens at the registry's audio rates (openai/gpt-audio); the record keeps the details", async () => {
    upstream.reply({ headers: SSE, body: detailedStream });
    const res = await rawStream(gw.url, { ...request(true), model: 'openai/gpt-audio' });
    assert.equal(res.status, 200);
    const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    // gpt-audio per million: text 2.5 in / 10 out, audio 32 in / 64 out; audio is part of input and output.
    const expected = (40 * 2.5 + 80 * 32 + 30 * 10 + 60 * 64) / 1e6;
    assert.ok(Math.abs(row.cost_usd - expected) < 1e-12, `${row.cost_usd} != ${expected}`);
    assert.equal(row.usage.audio_output_tokens, 60);
  });
});

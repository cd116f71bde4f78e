import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readStream, SluiceStreamError, type StreamMessage } from '../../src/client/index.ts';
import { anthropicStreamBody } from '../helpers/anthropic-fixtures.ts';
import { openAIStreamBody } from '../helpers/fixtures.ts';
import { upstreamConfig, useUpstreamGateway } from '../helpers/gateway.ts';
import { relayBodies } from '../helpers/responses-recordings.ts';

/**
 * sluice/client on streams as sluice produces them from the recordings: OpenAI chat chunks
 * (both profiles, usage extensions, vendor events passed through), a relayed Responses stream
 * (reasoning, a function call, a failure) and Anthropic's Messages (thinking signature, tool use),
 * each through a test gateway and read from fetch's Response.
 */
const SSE = { 'content-type': 'text/event-stream' };

const post = (url: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });

describe('sluice/client on OpenAI chat recordings', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: { ...upstreamConfig(url), stream: { usage_extensions: true, vendor_events: 'passthrough' } },
  }));

  it('joins parallel tool calls by index and reads the usage with its cost (usage extensions)', async () => {
    upstream.reply({ headers: SSE, body: openAIStreamBody('openai-chat/gpt4o-parallel-tool-calls.sse'), randomSplit: { seed: 5, maxPiece: 30 } });
    const message = await readStream(await post(gw.url, '/v1/chat/completions', chat('up/gpt-4o')));
    assert.equal(message.surface, 'chat');
    assert.equal(message.finishReason, 'tool_calls');
    assert.ok(message.toolCalls.length >= 2, JSON.stringify(message.toolCalls));
    for (const call of message.toolCalls) {
      assert.match(call.id, /^call_/);
      assert.equal(typeof JSON.parse(call.arguments), 'object');
    }
    assert.ok(message.usage && message.usage.inputTokens > 0 && message.usage.outputTokens > 0);
    assert.equal(typeof message.costUsd, 'number');
    assert.equal(message.usage?.estimated, false);
  });

  it('passes x_* vendor events to onVendorEvent, in order, and keeps them out of the message', async () => {
    const chunk = (content: string) => ({
      id: 'c',
      object: 'chat.completion.chunk',
      model: 'm',
      choices: [{ index: 0, delta: { content }, finish_reason: null }],
    });
    const body = [
      chunk('Hel'),
      { type: 'x_research.step', step: 1 },
      chunk('lo'),
      { type: 'x_chat.metadata', title: 'greeting' },
      { ...chunk(''), choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    ]
      .map((json) => `data: ${JSON.stringify(json)}\n\n`)
      .join('');
    upstream.reply({ headers: SSE, body: `${body}data: [DONE]\n\n` });
    const vendor: unknown[] = [];
    const message = await readStream(await post(gw.url, '/v1/chat/completions', chat('up/m')), { onVendorEvent: (e) => vendor.push(e.type) });
    assert.equal(message.text, 'Hello');
    assert.deepEqual(vendor, ['x_research.step', 'x_chat.metadata']);
  });

  it('reads the accounting profile: its events to onAccountingEvent, usage_final as the usage and cost', async () => {
    upstream.reply({ headers: SSE, body: openAIStreamBody('openai-chat/gpt4o-mini-text-after-tool.sse') });
    const events: string[] = [];
    const message = await readStream(await post(gw.url, '/v1/chat/completions', chat('up/gpt-4o-mini'), { 'x-sluice-profile': 'accounting' }), {
      onAccountingEvent: (e) => events.push(String(e.type)),
    });
    assert.equal(message.text, 'The capital of the UK is London.');
    assert.deepEqual(
      events.filter((t) => t !== 'cache_hit'),
      ['usage_start', 'usage_final', 'response.done'],
    );
    assert.deepEqual({ input: message.usage?.inputTokens, output: message.usage?.outputTokens }, { input: 78, output: 9 });
    assert.equal(typeof message.costUsd, 'number');
  });

  it("raises the upstream's failure as a SluiceStreamError with sluice's code and the upstream's status", async () => {
    const first =
      'data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n';
    upstream.reply({ headers: SSE, pieces: [first], after: 'reset' });
    await assert.rejects(readStream(await post(gw.url, '/v1/chat/completions', chat('up/m'))), (err: unknown) => {
      assert.ok(err instanceof SluiceStreamError, String(err));
      assert.ok(err.code && err.message, JSON.stringify(err.data));
      return true;
    });
  });
});

describe('sluice/client on relayed Responses recordings', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ config: upstreamConfig(url, { responses_api: true }) }));
  const read = async (name: string): Promise<StreamMessage> => {
    upstream.reply({ headers: SSE, body: relayBodies(name)[0] });
    return readStream(await post(gw.url, '/v1/responses', { model: 'up/recorded', input: 'hi', stream: true }));
  };

  it('accumulates a function call with its arguments and the usage', async () => {
    const message = await read('openai-responses/function-call.sse');
    assert.equal(message.surface, 'responses');
    assert.equal(message.toolCalls.length, 1);
    assert.match(message.toolCalls[0].id, /^call_/);
    assert.equal(typeof JSON.parse(message.toolCalls[0].arguments), 'object');
    assert.equal(message.finishReason, 'completed');
    assert.ok(message.usage && message.usage.inputTokens > 0);
  });

  it('accumulates the reasoning summary and the answer', async () => {
    const message = await read('openai-responses/reasoning-summary.sse');
    assert.ok(message.reasoning.length > 0 && message.text.length > 0);
    assert.ok((message.usage?.reasoningTokens ?? 0) > 0);
  });

  it("raises the recorded insufficient_quota failure with OpenAI's code and message", async () => {
    await assert.rejects(read('openai-responses/failed-insufficient-quota.jsonl'), (err: unknown) => {
      assert.ok(err instanceof SluiceStreamError, String(err));
      assert.equal(err.code, 'insufficient_quota');
      assert.match(err.message, /quota/);
      return true;
    });
  });
});

describe('sluice/client on Anthropic recordings through /v1/messages', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ env: { ANTHROPIC_API_KEY: 'sk-ant-reader', ANTHROPIC_BASE_URL: url } }));
  const read = async (name: string): Promise<StreamMessage> => {
    upstream.reply({ body: anthropicStreamBody(name), randomSplit: { seed: 9, maxPiece: 50 } });
    const body = { model: 'anthropic/claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }], stream: true };
    return readStream(await post(gw.url, '/v1/messages', body));
  };

  it('keeps the thinking with its signature, then the answer', async () => {
    const message = await read('anthropic/thinking-signature.sse');
    assert.equal(message.surface, 'messages');
    assert.ok(message.reasoning.length > 0 && message.text.length > 0);
    assert.ok((message.reasoningSignature ?? '').length > 20);
    assert.equal(message.finishReason, 'end_turn');
  });

  it('joins a tool_use input from its input_json_delta fragments', async () => {
    const message = await read('anthropic/tool-use.sse');
    assert.deepEqual(
      message.toolCalls.map((c) => ({ name: c.name, input: JSON.parse(c.arguments) as unknown })),
      [{ name: 'weather', input: { latitude: '52.5200', longitude: '13.4050' } }],
    );
    assert.equal(message.finishReason, 'tool_use');
    assert.deepEqual({ input: message.usage?.inputTokens, output: message.usage?.outputTokens }, { input: 633, output: 75 });
  });
});

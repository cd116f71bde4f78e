import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { anthropicStreamBody } from '../helpers/anthropic-fixtures.ts';
import { startFakeUpstream } from '../helpers/fake-upstream.ts';
import { parseSse, rawStream, startGateway, useUpstreamGateway } from '../helpers/gateway.ts';
import { collect, type Delta } from '../helpers/collect-chat-stream.ts';

/** Chat chunk deltas carry sluice's reasoning fields next to the SDK's known ones. */
const frame = (payload: Record<string, unknown>) => `event: ${payload.type}\ndata: ${JSON.stringify(payload)}\n\n`;
const messageStart = frame({
  type: 'message_start',
  message: { id: 'msg_e2e', model: 'claude-sonnet-4-5', content: [], usage: { input_tokens: 10, output_tokens: 1 } },
});
const textBlock = (text: string) =>
  frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
  frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
const overloaded = frame({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });

describe('anthropic through the openai SDK', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ env: { ANTHROPIC_API_KEY: 'sk-ant-e2e', ANTHROPIC_BASE_URL: url } }));

  const last = () => upstream.requests.at(-1);

  it('streams text with usage, sending a Messages API request', async () => {
    upstream.reply({ body: anthropicStreamBody('anthropic/text-sonnet45.jsonl'), randomSplit: { seed: 3, maxPiece: 40 } });
    const got = await collect(
      await gw.client.chat.completions.create({
        model: 'anthropic/claude-sonnet-4-5-20250929',
        messages: [
          { role: 'system', content: 'Be kind.' },
          { role: 'user', content: 'How are you?' },
        ],
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    assert.equal(got.content, "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?");
    assert.equal(got.finish, 'stop');
    assert.deepEqual(got.usage, {
      prompt_tokens: 12,
      completion_tokens: 30,
      total_tokens: 42,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    });
    const sent = last();
    assert.equal(sent?.url, '/v1/messages');
    assert.equal(sent?.headers['x-api-key'], 'sk-ant-e2e');
    assert.equal(sent?.headers['anthropic-version'], '2023-06-01');
    assert.equal(sent?.headers.authorization, undefined);
    assert.deepEqual(sent?.json, {
      model: 'claude-sonnet-4-5-20250929',
      system: [{ type: 'text', text: 'Be kind.' }],
      messages: [{ role: 'user', content: 'How are you?' }],
      max_tokens: 4096,
      stream: true,
    });
  });

  it('streams thinking as reasoning_content with its reasoning_signature, then the answer', async () => {
    upstream.reply({ body: anthropicStreamBody('anthropic/thinking-signature.sse'), randomSplit: { seed: 11 } });
    const got = await collect(
      await gw.client.chat.completions.create({
        model: 'anthropic/claude-sonnet-4-0',
        messages: [{ role: 'user', content: 'How do I cross the street?' }],
        reasoning_effort: 'minimal',
        max_completion_tokens: 4096,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    assert.equal(
      got.reasoning,
      'This is a straightforward question about pedestrian safety. I should provide clear, helpful advice about how to safely cross a street. This is basic safety information that could help prevent accidents.',
    );
    assert.ok(got.signature?.startsWith('EvMCCkYICxgCKkCHP2cSuEdcJK/0rFwqES/'));
    assert.ok(got.content.startsWith('Here are the basic steps for'));
    assert.ok(got.content.endsWith('Always prioritize safety over speed when crossing streets.'));
    assert.equal(got.finish, 'stop');
    assert.equal(got.usage?.completion_tokens, 282);
    assert.deepEqual((last()!.json as Record<string, unknown>).thinking, { type: 'enabled', budget_tokens: 1024 });

    // The next turn sends the reasoning back; Anthropic gets it as a signed thinking block.
    upstream.reply({ body: anthropicStreamBody('anthropic/text-haiku45.sse') });
    await collect(
      await gw.client.chat.completions.create({
        model: 'anthropic/claude-sonnet-4-0',
        messages: [
          { role: 'user', content: 'How do I cross the street?' },
          {
            role: 'assistant',
            content: got.content,
            reasoning_content: got.reasoning,
            reasoning_signature: got.signature,
          } as OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam,
          { role: 'user', content: 'And at night?' },
        ],
        reasoning_effort: 'minimal',
        stream: true,
      }),
    );
    const turn = (last()!.json as { messages: { content: unknown }[] }).messages[1];
    assert.deepEqual(turn.content, [
      { type: 'thinking', thinking: got.reasoning, signature: got.signature },
      { type: 'text', text: got.content },
    ]);
  });

  it('streams parallel tool calls with indexes 0 and 1', async () => {
    upstream.reply({ body: anthropicStreamBody('anthropic/parallel-tool-use.sse'), randomSplit: { seed: 5 } });
    const got = await collect(
      await gw.client.chat.completions.create({
        model: 'anthropic/claude-3-5-sonnet-20240620',
        messages: [{ role: 'user', content: 'What is the weather and current time in San Francisco?' }],
        tools: [
          { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
          { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } },
        ],
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    assert.deepEqual(got.calls, [
      { id: 'toolu_014x5X91kx3fvdhpLvwXZWE2', name: 'get_weather', args: '{"location": "San Francisco, CA", "unit": "celsius"}' },
      { id: 'toolu_0121kXsENLvoDZ72LCuAnCCz', name: 'get_time', args: '{"timezone": "America/Los_Angeles"}' },
    ]);
    assert.ok(got.content.startsWith('Certainly! I can help you'));
    assert.equal(got.finish, 'tool_calls');
    assert.deepEqual(got.usage, {
      prompt_tokens: 506,
      completion_tokens: 153,
      total_tokens: 659,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    });
  });

  it('streams a tool call without arguments as "{}"', async () => {
    upstream.reply({ body: anthropicStreamBody('anthropic/tool-no-args.jsonl') });
    const got = await collect(
      await gw.client.chat.completions.create({
        model: 'anthropic/claude-sonnet-4-5',
        messages: [{ role: 'user', content: 'Update the issues' }],
        tools: [{ type: 'function', function: { name: 'updateIssueList' } }],
        stream: true,
      }),
    );
    assert.deepEqual(got.calls, [{ id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', args: '{}' }]);
    assert.equal(got.content, "I'll update the issue list for you.");
    assert.equal(got.finish, 'tool_calls');
  });

  it('reports cache reads as cached prompt tokens', async () => {
    upstream.reply({ body: anthropicStreamBody('anthropic/prompt-cache-read.sse') });
    const got = await collect(
      await gw.client.chat.completions.create({
        model: 'anthropic/claude-3-5-sonnet-20240620',
        messages: [{ role: 'user', content: 'Summarize' }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    assert.deepEqual(got.usage, {
      prompt_tokens: 1169,
      completion_tokens: 221,
      total_tokens: 1390,
      prompt_tokens_details: { cached_tokens: 1165, cache_write_tokens: 0 },
    });
  });

  it('answers a non-streaming request with reasoning, signature, tool calls and usage', async () => {
    upstream.reply({
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'msg_ns',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5-20250929',
        content: [
          { type: 'thinking', thinking: 'Use the tool.', signature: 'EqQBsig' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_ns', name: 'get_weather', input: { city: 'Paris' } },
        ],
        stop_reason: 'tool_use',
        usage: { input_tokens: 20, cache_read_input_tokens: 100, cache_creation_input_tokens: 0, output_tokens: 40 },
      }),
    });
    const completion = await gw.client.chat.completions.create({
      model: 'anthropic/claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [{ type: 'function', function: { name: 'get_weather' } }],
      reasoning_effort: 'low',
    });
    const message = completion.choices[0].message as (typeof completion.choices)[0]['message'] & Delta;
    assert.equal(message.content, 'Checking.');
    assert.equal(message.reasoning_content, 'Use the tool.');
    assert.equal(message.reasoning_signature, 'EqQBsig');
    assert.deepEqual(message.tool_calls, [{ id: 'toolu_ns', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
    assert.equal(completion.choices[0].finish_reason, 'tool_calls');
    assert.equal(completion.model, 'anthropic/claude-sonnet-4-5');
    assert.deepEqual(completion.usage, {
      prompt_tokens: 120,
      completion_tokens: 40,
      total_tokens: 160,
      prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 0 },
    });
    const sent = last()?.json as Record<string, unknown>;
    assert.equal(sent.stream, undefined);
    assert.equal(last()?.headers.accept, 'application/json');
    assert.deepEqual([sent.max_tokens, sent.thinking], [8192, { type: 'enabled', budget_tokens: 4096 }]);
  });

  it('turns a pre-stream provider error into an SDK exception with the right status and message', async () => {
    upstream.reply({
      status: 529,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' }, request_id: 'req_1' }),
    });
    await assert.rejects(
      gw.client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }], stream: true }),
      (e: unknown) => e instanceof OpenAI.APIError && e.status === 503 && e.message === '503 Overloaded' && e.code === 'upstream_overloaded',
    );
    upstream.reply({
      status: 400,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'error',
        error: { type: 'invalid_request_error', message: 'prompt is too long: 250000 tokens > 200000 maximum' },
      }),
    });
    await assert.rejects(
      gw.client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] }),
      (e: unknown) => e instanceof OpenAI.APIError && e.status === 400 && e.message === '400 prompt is too long: 250000 tokens > 200000 maximum',
    );
  });

  it('turns an in-stream error event before any output into an HTTP error', async () => {
    upstream.reply({ body: messageStart + frame({ type: 'ping' }) + overloaded });
    await assert.rejects(
      gw.client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }], stream: true }),
      (e: unknown) => e instanceof OpenAI.APIError && e.status === 503 && e.message === '503 Overloaded',
    );
    upstream.reply({ body: frame({ type: 'error', error: { type: 'rate_limit_error', message: 'Too many requests' } }) });
    await assert.rejects(
      gw.client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }], stream: true }),
      (e: unknown) => e instanceof OpenAI.APIError && e.status === 429,
    );
  });

  it('ends a stream that fails after output with an error frame and [DONE]', async () => {
    upstream.reply({ body: messageStart + textBlock('Partial answer') + overloaded });
    const { status, text } = await rawStream(gw.url, {
      model: 'anthropic/claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    assert.equal(status, 200);
    const frames = parseSse(text).frames.map((f) => f.data);
    assert.equal(frames.length, 4);
    assert.equal(JSON.parse(frames[0]).choices[0].delta.role, 'assistant');
    assert.equal(JSON.parse(frames[1]).choices[0].delta.content, 'Partial answer');
    assert.deepEqual(JSON.parse(frames[2]), {
      error: {
        message: 'Overloaded',
        type: 'server_error',
        code: 'upstream_overloaded',
        // The stream came with a 200: the status Anthropic answered, not the one the error type implies (529).
        upstream: { status: 200, type: 'overloaded_error', code: null },
      },
    });
    assert.equal(frames[3], '[DONE]');
  });

  it('answers 400 naming a parameter Anthropic cannot honour, without calling it', async () => {
    const before = upstream.requests.length;
    await assert.rejects(
      gw.client.chat.completions.create({
        model: 'anthropic/claude-sonnet-4-5',
        messages: [{ role: 'user', content: 'hi' }],
        logit_bias: { '50256': -100 },
        stream: true,
      }),
      (e: unknown) => e instanceof OpenAI.APIError && e.status === 400 && e.param === 'logit_bias',
    );
    assert.equal(upstream.requests.length, before);
  });
});

describe('anthropic from the config file', () => {
  it('uses providers.anthropic (base_url, api_key, drop_params) without any env', async () => {
    const upstream = await startFakeUpstream();
    const gw = await startGateway({
      providers: { anthropic: { base_url: upstream.url, api_key: 'sk-ant-file', drop_params: true } },
    });
    try {
      upstream.reply({ body: anthropicStreamBody('anthropic/text-haiku45.sse') });
      const got = await collect(
        await gw.client.chat.completions.create({
          model: 'anthropic/claude-haiku-4-5-20251001',
          messages: [{ role: 'user', content: 'Count from 1 to 3' }],
          seed: 1,
          presence_penalty: 1,
          stream: true,
        }),
      );
      assert.equal(got.content, '1\n2\n3');
      const sent = upstream.requests.at(-1);
      assert.equal(sent?.headers['x-api-key'], 'sk-ant-file');
      assert.deepEqual(sent?.json, {
        model: 'claude-haiku-4-5-20251001',
        messages: [{ role: 'user', content: 'Count from 1 to 3' }],
        max_tokens: 4096,
        stream: true,
      });
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { anthropicStreamBody } from '../helpers/anthropic-fixtures.ts';
import { startFakeUpstream } from '../helpers/fake-upstream.ts';
import { openAIStreamBody } from '../helpers/fixtures.ts';
import { startGateway, upstreamConfig, useUpstreamGateway } from '../helpers/gateway.ts';

/**
 * /v1/responses takes every parameter of OpenAI's Responses API, as the clients send them
 * (@ai-sdk/openai `promptCacheKey`, LangChain `useResponsesApi`, the Agents SDK's
 * `modelSettings.truncation` and `providerData`): honoured where the target can, harmless where it
 * cannot, and a 400 naming the few whose absence would change the answer.
 */
const routine = {
  input: 'hi',
  prompt_cache_key: 'tenant-7',
  prompt_cache_retention: '24h' as const,
  safety_identifier: 'user-hash-1',
  truncation: 'auto' as const,
  background: false,
  max_tool_calls: 4,
  text: { verbosity: 'low' as const },
  store: false,
};

describe('Responses parameters on an OpenAI-compatible upstream (translated to Chat Completions)', () => {
  const { upstream, gw } = useUpstreamGateway();
  const sent = () => upstream.requests.at(-1)!.json as Record<string, unknown>;

  it('the routine parameters are accepted, and the hints reach the upstream under their Chat Completions names', async () => {
    upstream.reply({ body: openAIStreamBody('openai-chat/gpt41-nano-text-long.jsonl') });
    const response = await gw.client.responses.stream({ model: 'up/m', ...routine }).finalResponse();
    assert.equal(response.status, 'completed');
    assert.equal(response.truncation, 'auto');
    const body = sent();
    assert.deepEqual(
      [body.prompt_cache_key, body.prompt_cache_retention, body.safety_identifier, body.verbosity],
      ['tenant-7', '24h', 'user-hash-1', 'low'],
    );
    for (const field of ['truncation', 'background', 'max_tool_calls', 'store', 'text']) assert.equal(body[field], undefined, field);
  });

  it('top_logprobs with the logprobs include: asked upstream, and on the output text (gpt4o-content-logprobs.sse)', async () => {
    upstream.reply({ body: openAIStreamBody('openai-chat/gpt4o-content-logprobs.sse') });
    const response = await gw.client.responses
      .stream({ model: 'up/m', input: 'hi', top_logprobs: 2, include: ['message.output_text.logprobs'] })
      .finalResponse();
    assert.deepEqual([sent().logprobs, sent().top_logprobs], [true, 2]);
    const part = (response.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText;
    assert.equal(part.logprobs?.[0]?.token, 'Foo');
  });

  it('max_tool_calls: 1 keeps the first of parallel calls (gpt35-parallel-tool-calls-no-usage.sse)', async () => {
    upstream.reply({ body: openAIStreamBody('openai-chat/gpt35-parallel-tool-calls-no-usage.sse') });
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object' }, strict: false }];
    const response = await gw.client.responses.stream({ model: 'up/m', input: 'hi', tools, max_tool_calls: 1 }).finalResponse();
    assert.deepEqual(
      response.output.map((item) => item.type),
      ['function_call'],
    );
  });

  it('an OpenAI service a translated target cannot give is a 400 naming it, before any upstream call', async () => {
    const before = upstream.requests.length;
    for (const [field, value] of [
      ['conversation', 'conv_1'],
      ['background', true],
      ['prompt', { id: 'pmpt_1' }],
    ] as const) {
      await assert.rejects(
        gw.client.responses.create({ model: 'up/m', input: 'hi', [field]: value }),
        (e: unknown) => e instanceof OpenAI.BadRequestError && e.param === field,
        field,
      );
    }
    assert.equal(upstream.requests.length, before);
  });
});

describe('Responses parameters on a relayed upstream (responses_api: true)', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ config: upstreamConfig(url, { responses_api: true }) }));

  it('every parameter goes on as sent, OpenAI services included', async () => {
    upstream.reply({ status: 400, headers: { 'content-type': 'application/json' }, body: '{"error":{"message":"stop here"}}' });
    const body = { model: 'up/m', ...routine, conversation: 'conv_1', top_logprobs: 2 };
    await assert.rejects(gw.client.responses.create(body));
    assert.deepEqual(upstream.requests.at(-1)!.json, { ...body, model: 'm', stream: false });
  });
});

describe('Responses parameters on Anthropic', () => {
  it('the routine ones are accepted; drop_params drops an OpenAI service instead of a 400', async () => {
    const upstream = await startFakeUpstream();
    const env = { ANTHROPIC_API_KEY: 'sk-ant-e2e', ANTHROPIC_BASE_URL: upstream.url };
    const strict = await startGateway({}, env);
    const dropping = await startGateway({ providers: { anthropic: { base_url: upstream.url, api_key: 'k', drop_params: true } } });
    try {
      upstream.reply({ body: anthropicStreamBody('anthropic/text-haiku45.sse') });
      const response = await strict.client.responses.stream({ model: 'anthropic/claude-haiku-4-5', ...routine }).finalResponse();
      assert.equal(response.output_text, '1\n2\n3');
      const sent = upstream.requests.at(-1)!.json as Record<string, unknown>;
      // Nothing of OpenAI's reaches Anthropic but the end user, as Anthropic names it.
      assert.deepEqual(Object.keys(sent).sort(), ['max_tokens', 'messages', 'metadata', 'model', 'stream']);
      assert.deepEqual(sent.metadata, { user_id: 'user-hash-1' });

      await assert.rejects(
        strict.client.responses.create({ model: 'anthropic/claude-haiku-4-5', input: 'hi', conversation: 'conv_1' }),
        (e: unknown) => e instanceof OpenAI.BadRequestError && e.param === 'conversation' && /drop_params/.test(e.message),
      );
      const dropped = await dropping.client.responses
        .stream({ model: 'anthropic/claude-haiku-4-5', input: 'hi', conversation: 'conv_1' })
        .finalResponse();
      assert.equal(dropped.status, 'completed');
    } finally {
      await strict.close();
      await dropping.close();
      await upstream.close();
    }
  });
});

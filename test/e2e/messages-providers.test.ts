import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { anthropicPayloads, anthropicStreamBody } from '../helpers/anthropic-fixtures.ts';
import { bedrockBody, SONNET4_SIGNATURE } from '../helpers/bedrock-fixtures.ts';
import { openAIStreamBody, readFixture } from '../helpers/fixtures.ts';
import { parseSse, rawStream, requestRecord, type TestGateway, useUpstreamGateway } from '../helpers/gateway.ts';
import { geminiPayloads, geminiResponseOf, geminiStreamBody } from '../helpers/gemini-fixtures.ts';

/**
 * POST /v1/messages through the official Anthropic SDK, for every native provider, on recorded
 * upstream answers: Anthropic relayed frame for frame, OpenAI, Gemini and Bedrock translated from
 * the canonical stream. Each suite also runs a tool-use round trip, with the thinking signature
 * going back where the provider has one, and reads the request's ledger row.
 */

const anthropic = (gw: TestGateway) => new Anthropic({ baseURL: gw.url, apiKey: 'unused', maxRetries: 0, timeout: 20_000 });
const SSE = { 'content-type': 'text/event-stream' };
const JSON_TYPE = { 'content-type': 'application/json' };
const EVENTSTREAM = { 'content-type': 'application/vnd.amazon.eventstream' };

/** The row of a Messages response: sluice's message ids are `msg_<request id>`. */
const rowOf = (gw: TestGateway, message: { id: string }) => requestRecord(gw, message.id.slice('msg_'.length));

/** The `data:` lines of a recording, exactly as they were sent (trailing spaces and all). */
function recordedData(name: string): string[] {
  return anthropicStreamBody(name)
    .toString('utf8')
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice('data: '.length));
}

describe('/v1/messages relayed to Anthropic', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ env: { ANTHROPIC_API_KEY: 'sk-ant-e2e', ANTHROPIC_BASE_URL: url } }));
  const last = () => upstream.requests.at(-1)!;

  it('relays a thinking stream frame for frame, body as sent but the model name, and accounts it', async () => {
    upstream.reply({ headers: SSE, body: anthropicStreamBody('anthropic/thinking-signature.sse'), randomSplit: { seed: 4, maxPiece: 50 } });
    const body = {
      model: 'anthropic/claude-sonnet-4-0',
      max_tokens: 4096,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'How do I cross the street?' }],
      stream: true,
    };
    const raw = await rawStream(gw.url, body, { 'anthropic-beta': 'interleaved-thinking-2025-05-14' }, '/v1/messages');
    assert.equal(raw.status, 200);
    const frames = parseSse(raw.text).frames.filter((f) => f.event);
    assert.deepEqual(
      frames.map((f) => f.data),
      recordedData('anthropic/thinking-signature.sse'),
    );
    assert.equal(last().url, '/v1/messages');
    assert.deepEqual(last().json, { ...body, model: 'claude-sonnet-4-0' });
    assert.equal(last().headers['x-api-key'], 'sk-ant-e2e');
    assert.equal(last().headers['anthropic-beta'], 'interleaved-thinking-2025-05-14');

    upstream.reply({ headers: SSE, body: anthropicStreamBody('anthropic/thinking-signature.sse'), randomSplit: { seed: 5 } });
    const message = await anthropic(gw)
      .messages.stream({
        model: 'anthropic/claude-sonnet-4-0',
        max_tokens: 4096,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'How do I cross the street?' }],
      })
      .finalMessage();
    const [thinking, text] = message.content;
    assert.equal(thinking.type, 'thinking');
    assert.ok((thinking as Anthropic.ThinkingBlock).signature.startsWith('EvMCCkYICxgCKkCHP2cSuEdcJK/0rFwqES/'));
    assert.equal(text.type, 'text');
    const recorded = anthropicPayloads('anthropic/thinking-signature.sse');
    const finalUsage = recorded.find((p) => p.type === 'message_delta')!.usage;
    assert.equal(message.usage.output_tokens, finalUsage.output_tokens);
    const row = await rowOf(gw, { id: `msg_${raw.headers.get('x-request-id')}` });
    assert.equal(row.surface, 'messages');
    assert.equal(row.provider, 'anthropic');
    assert.equal(row.streamed, true);
    assert.equal(row.usage.input_tokens, recorded[0].message.usage.input_tokens);
    assert.equal(row.usage.output_tokens, finalUsage.output_tokens);
    assert.equal(row.finish_reason, 'stop');
  });

  it('runs a tool-use round trip, each turn relayed with the blocks the client sent', async () => {
    const client = anthropic(gw);
    const tools = [{ name: 'weather', description: 'Gets current weather for a location', input_schema: { type: 'object' as const } }];
    const question = { role: 'user' as const, content: "What's the weather in Berlin? (52.5200, 13.4050)" };
    upstream.reply({ headers: SSE, body: anthropicStreamBody('anthropic/tool-use.sse'), randomSplit: { seed: 6 } });
    const first = await client.messages.stream({ model: 'anthropic/claude-haiku-4-5', max_tokens: 1024, tools, messages: [question] }).finalMessage();
    assert.equal(first.stop_reason, 'tool_use');
    const call = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    assert.deepEqual(call.input, { latitude: '52.5200', longitude: '13.4050' });

    upstream.reply({ headers: SSE, body: anthropicStreamBody('anthropic/text-after-tool-result.sse'), randomSplit: { seed: 7 } });
    const result = { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: call.id, content: '15°C' }] };
    const second = await client.messages
      .stream({
        model: 'anthropic/claude-haiku-4-5',
        max_tokens: 1024,
        tools,
        messages: [question, { role: 'assistant', content: first.content }, result],
      })
      .finalMessage();
    assert.equal(second.stop_reason, 'end_turn');
    assert.equal(second.content[0].type, 'text');
    const sent = last().json as { messages: unknown[] };
    assert.deepEqual(sent.messages[2], result);
    assert.equal((sent.messages[1] as { content: { type: string }[] }).content.find((b) => b.type === 'tool_use')?.type, 'tool_use');
  });

  it('keeps prompt caching: cache_control goes upstream, cache reads come back and are in the ledger', async () => {
    upstream.reply({ headers: SSE, body: anthropicStreamBody('anthropic/prompt-cache-read.sse') });
    const system = [{ type: 'text' as const, text: 'A long, cached prompt.', cache_control: { type: 'ephemeral' as const } }];
    const stream = anthropic(gw).messages.stream({
      model: 'anthropic/claude-3-5-sonnet-20240620',
      max_tokens: 1024,
      system,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    // A relayed message keeps Anthropic's id: the ledger row is found by sluice's X-Request-ID.
    const { response } = await stream.withResponse();
    const message = await stream.finalMessage();
    assert.deepEqual((last().json as { system: unknown }).system, system);
    assert.equal(message.usage.cache_read_input_tokens, 1165);
    const row = await requestRecord(gw, response.headers.get('x-request-id')!);
    assert.equal(row.usage.cached_input_tokens, 1165);
    assert.equal(row.usage.input_tokens, 1169);
  });

  it('returns a whole message as Anthropic sent it, and counts tokens with Anthropic', async () => {
    const sentMessage = {
      id: 'msg_upstream',
      type: 'message',
      role: 'assistant',
      model: 'claude-haiku-4-5-20251001',
      content: [{ type: 'text', text: 'Hi!' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 9, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    };
    upstream.reply({ headers: JSON_TYPE, body: JSON.stringify(sentMessage) });
    const message = await anthropic(gw).messages.create({
      model: 'anthropic/claude-haiku-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    assert.deepEqual(message, sentMessage);
    assert.equal((last().json as { stream?: boolean }).stream, undefined);

    upstream.reply({ headers: JSON_TYPE, body: JSON.stringify({ input_tokens: 321 }) });
    const count = await anthropic(gw).messages.countTokens({ model: 'anthropic/claude-haiku-4-5', messages: [{ role: 'user', content: 'Hi' }] });
    assert.deepEqual(count, { input_tokens: 321 });
    assert.equal(last().url, '/v1/messages/count_tokens');
    assert.deepEqual(last().json, { model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'Hi' }] });
  });

  it("ends a relayed stream cut before message_stop with sluice's error event; one the upstream failed, with the upstream's alone", async () => {
    const whole = anthropicStreamBody('anthropic/text-haiku45.sse').toString('utf8');
    const cut = whole.slice(0, whole.indexOf('event: message_stop'));
    upstream.reply({ headers: SSE, body: cut });
    const body = { model: 'anthropic/claude-haiku-4-5', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Hi' }] };
    const truncated = await rawStream(gw.url, body, {}, '/v1/messages');
    const last = parseSse(truncated.text).frames.at(-1)!;
    assert.equal(last.event, 'error');
    assert.equal(JSON.parse(last.data).error.type, 'api_error');
    const row = await requestRecord(gw, truncated.headers.get('x-request-id')!);
    assert.deepEqual([row.outcome, row.error.code], ['error', 'upstream_stream_truncated']);

    const overloaded = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    upstream.reply({ headers: SSE, body: cut.slice(0, cut.indexOf('event: content_block_start')) + overloaded });
    const failed = await rawStream(gw.url, body, {}, '/v1/messages');
    const errors = parseSse(failed.text).frames.filter((f) => f.event === 'error');
    assert.deepEqual(
      errors.map((f) => f.data),
      ['{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'],
    );
  });

  it("answers an upstream refusal before the stream with Anthropic's own status and type", async () => {
    upstream.reply({
      status: 529,
      headers: JSON_TYPE,
      body: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    });
    await assert.rejects(
      anthropic(gw).messages.create({
        model: 'anthropic/claude-haiku-4-5',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
      }),
      (err: unknown) => err instanceof Anthropic.APIError && err.status === 529 && err.type === 'overloaded_error',
    );
  });
});

describe('/v1/messages translated for OpenAI', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ env: { OPENAI_API_KEY: 'sk-e2e', OPENAI_BASE_URL: `${url}/v1` } }));
  const last = () => upstream.requests.at(-1)!;
  const recordedRequest = (name: string) => JSON.parse(readFixture(name).toString('utf8')) as { tools: unknown[]; messages: unknown[] };
  const tool = {
    name: 'get_capital',
    description: '',
    input_schema: { type: 'object' as const, properties: { country: { type: 'string' } }, required: ['country'], additionalProperties: false },
  };
  const question = { role: 'user' as const, content: 'What is the capital of the UK? Use the tool, then answer.' };

  it('streams a tool call as a tool_use block, then answers the tool_result', async () => {
    const client = anthropic(gw);
    upstream.reply({ headers: SSE, body: openAIStreamBody('openai-chat/gpt4o-mini-tool-call.sse'), randomSplit: { seed: 8 } });
    const first = await client.messages.stream({ model: 'openai/gpt-4o-mini', max_tokens: 256, tools: [tool], messages: [question] }).finalMessage();
    assert.equal(first.stop_reason, 'tool_use');
    assert.deepEqual(first.content, [{ type: 'tool_use', id: 'call_ZR5UUuTt3pf61kjwAJIYdVMj', name: 'get_capital', input: { country: 'UK' } }]);
    assert.deepEqual(first.usage, { input_tokens: 53, output_tokens: 15, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    const sent = last().json as Record<string, any>;
    assert.equal(last().url, '/v1/chat/completions');
    assert.deepEqual(sent.messages, [question]);
    assert.deepEqual(sent.tools, [{ type: 'function', function: { name: 'get_capital', description: '', parameters: tool.input_schema } }]);

    upstream.reply({ headers: SSE, body: openAIStreamBody('openai-chat/gpt4o-mini-text-after-tool.sse'), randomSplit: { seed: 9 } });
    const result = {
      role: 'user' as const,
      content: [{ type: 'tool_result' as const, tool_use_id: 'call_ZR5UUuTt3pf61kjwAJIYdVMj', content: 'London' }],
    };
    const second = await client.messages
      .stream({
        model: 'openai/gpt-4o-mini',
        max_tokens: 256,
        tools: [tool],
        messages: [question, { role: 'assistant', content: first.content }, result],
      })
      .finalMessage();
    assert.equal(second.stop_reason, 'end_turn');
    assert.match((second.content[0] as Anthropic.TextBlock).text, /London/);
    const [, assistant, toolMessage] = (last().json as { messages: Record<string, unknown>[] }).messages;
    const [, recordedAssistant, recordedTool] = recordedRequest('openai-chat/gpt4o-mini-text-after-tool.request.json').messages as Record<
      string,
      unknown
    >[];
    assert.deepEqual(assistant.tool_calls, recordedAssistant.tool_calls);
    assert.deepEqual(toolMessage, recordedTool);
    const row = await rowOf(gw, second);
    assert.deepEqual([row.surface, row.provider, row.outcome], ['messages', 'openai', 'ok']);
  });

  it('answers without stream from a chat completion, and refuses what OpenAI has no counterpart for', async () => {
    upstream.reply({
      headers: JSON_TYPE,
      body: JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4o-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'length' }],
        usage: { prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 },
      }),
    });
    const message = await anthropic(gw).messages.create({ model: 'openai/gpt-4o-mini', max_tokens: 2, messages: [{ role: 'user', content: 'Hi' }] });
    assert.deepEqual(message.content, [{ type: 'text', text: 'Hello.' }]);
    assert.equal(message.stop_reason, 'max_tokens');
    assert.equal((last().json as { max_completion_tokens: number }).max_completion_tokens, 2);
    await assert.rejects(
      anthropic(gw).messages.create({
        model: 'openai/gpt-4o-mini',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Hi' }],
        tools: [{ type: 'web_search_20250305', name: 'web_search' }],
      }),
      (err: unknown) => err instanceof Anthropic.BadRequestError && err.type === 'invalid_request_error' && /tools\[0\]\.type/.test(err.message),
    );
  });
});

describe('/v1/messages translated for Gemini', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ env: { GEMINI_API_KEY: 'AIza-e2e', GEMINI_BASE_URL: url } }));
  const last = () => upstream.requests.at(-1)!;
  const tool = {
    name: 'weather',
    description: 'Gets current weather for a location',
    input_schema: { type: 'object' as const, properties: { latitude: { type: 'string' }, longitude: { type: 'string' } } },
  };
  const question = { role: 'user' as const, content: "What's the weather in Berlin? (52.5200, 13.4050)" };

  it('streams a function call with its thought signature, which goes back on the next turn', async () => {
    const client = anthropic(gw);
    const name = 'gemini/function-call-thought-signature-2.5-flash.sse';
    const signature = geminiPayloads(name)[0].candidates[0].content.parts[0].thoughtSignature as string;
    upstream.reply({ headers: SSE, body: geminiStreamBody(name), randomSplit: { seed: 10 } });
    const first = await client.messages
      .stream({
        model: 'google/gemini-2.5-flash',
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        tools: [tool],
        messages: [question],
      })
      .finalMessage();
    assert.equal(first.stop_reason, 'tool_use');
    const thinking = first.content.find((b): b is Anthropic.ThinkingBlock => b.type === 'thinking');
    assert.equal(thinking?.signature, signature);
    const call = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    assert.deepEqual([call.name, call.input], ['weather', { latitude: '52.5200', longitude: '13.4050' }]);
    assert.ok(call.id, 'a call Gemini sent without an id gets one, for the tool_result');

    upstream.reply({ headers: SSE, body: geminiStreamBody('gemini/text-after-function-response-2.5-flash.sse'), randomSplit: { seed: 11 } });
    const result = { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: call.id, content: '15°C, wind 10 km/h' }] };
    const second = await client.messages
      .stream({
        model: 'google/gemini-2.5-flash',
        max_tokens: 1024,
        tools: [tool],
        messages: [question, { role: 'assistant', content: first.content }, result],
      })
      .finalMessage();
    assert.equal(second.stop_reason, 'end_turn');
    assert.equal(second.content.at(-1)?.type, 'text');
    const contents = (last().json as { contents: { role: string; parts: Record<string, unknown>[] }[] }).contents;
    const modelTurn = contents.find((c) => c.role === 'model')!;
    const callPart = modelTurn.parts.find((p) => p.functionCall)!;
    assert.equal(callPart.thoughtSignature, signature);
    const row = await rowOf(gw, second);
    assert.deepEqual([row.surface, row.provider], ['messages', 'google']);
  });

  it('answers without stream from generateContent: the signed call as thinking and tool_use blocks', async () => {
    const name = 'gemini/function-call-thought-signature-2.5-flash.sse';
    upstream.reply({ headers: JSON_TYPE, body: JSON.stringify(geminiResponseOf(name)) });
    const message = await anthropic(gw).messages.create({ model: 'google/gemini-2.5-flash', max_tokens: 1024, tools: [tool], messages: [question] });
    assert.match(last().url, /:generateContent$/);
    assert.deepEqual(
      message.content.map((b) => b.type),
      ['thinking', 'tool_use'],
    );
    assert.equal((message.content[0] as Anthropic.ThinkingBlock).signature, geminiPayloads(name)[0].candidates[0].content.parts[0].thoughtSignature);
    assert.equal(message.stop_reason, 'tool_use');
    assert.deepEqual([message.usage.input_tokens, message.usage.output_tokens], [103, 73]);
  });

  it("counts tokens with Gemini's countTokens", async () => {
    upstream.reply({ headers: JSON_TYPE, body: JSON.stringify({ totalTokens: 77 }) });
    const count = await anthropic(gw).messages.countTokens({ model: 'google/gemini-2.5-flash', system: 'Be brief.', messages: [question] });
    assert.deepEqual(count, { input_tokens: 77 });
    assert.equal(last().url, '/v1beta/models/gemini-2.5-flash:countTokens');
    const sent = last().json as { generateContentRequest: Record<string, unknown> };
    assert.equal(sent.generateContentRequest.model, 'models/gemini-2.5-flash');
    assert.deepEqual(sent.generateContentRequest.systemInstruction, { parts: [{ text: 'Be brief.' }] });
  });
});

describe('/v1/messages translated for Bedrock', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({
    env: {
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL_BEDROCK_RUNTIME: url,
    },
  }));
  const last = () => upstream.requests.at(-1)!;
  const MODEL = 'bedrock/us.anthropic.claude-sonnet-4-20250514-v1:0';

  it('streams signed reasoning as a thinking block, and sends it back signed on the next turn', async () => {
    const client = anthropic(gw);
    upstream.reply({
      headers: EVENTSTREAM,
      body: bedrockBody('bedrock/converse-reasoning-claude-sonnet4.b64'),
      randomSplit: { seed: 12, maxPiece: 40 },
    });
    const first = await client.messages
      .stream({ model: MODEL, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'Hello' }] })
      .finalMessage();
    const [thinking, text] = first.content;
    assert.equal(thinking.type, 'thinking');
    assert.equal((thinking as Anthropic.ThinkingBlock).signature, SONNET4_SIGNATURE);
    assert.equal((text as Anthropic.TextBlock).text, "Hello! It's nice to meet you. How can I help you today?");
    assert.equal(first.stop_reason, 'end_turn');
    assert.deepEqual([first.usage.input_tokens, first.usage.output_tokens], [36, 73]);

    upstream.reply({ headers: EVENTSTREAM, body: bedrockBody('bedrock/converse-text-nova-micro.b64') });
    await client.messages
      .stream({
        model: MODEL,
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [
          { role: 'user', content: 'Hello' },
          { role: 'assistant', content: first.content },
          { role: 'user', content: 'And?' },
        ],
      })
      .finalMessage();
    const turn = (last().json as { messages: { role: string; content: Record<string, any>[] }[] }).messages[1];
    const reasoning = turn.content.find((b) => b.reasoningContent)?.reasoningContent;
    assert.equal(reasoning?.reasoningText?.signature, SONNET4_SIGNATURE);
  });

  it('answers without stream from Converse, cache reads and writes in the usage', async () => {
    upstream.reply({
      headers: JSON_TYPE,
      body: JSON.stringify({
        output: {
          message: {
            role: 'assistant',
            content: [
              { reasoningContent: { reasoningText: { text: 'Need the weather tool.', signature: SONNET4_SIGNATURE } } },
              { toolUse: { toolUseId: 'tooluse_x1', name: 'get_weather', input: { location: 'Barcelona' } } },
            ],
          },
        },
        stopReason: 'tool_use',
        usage: { inputTokens: 20, outputTokens: 30, totalTokens: 1250, cacheReadInputTokens: 1000, cacheWriteInputTokens: 200 },
      }),
    });
    const message = await anthropic(gw).messages.create({
      model: MODEL,
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [{ name: 'get_weather', input_schema: { type: 'object' as const } }],
      messages: [{ role: 'user', content: 'Weather in Barcelona?' }],
    });
    assert.match(last().url, /\/converse$/);
    assert.deepEqual(message.content, [
      { type: 'thinking', thinking: 'Need the weather tool.', signature: SONNET4_SIGNATURE },
      { type: 'tool_use', id: 'tooluse_x1', name: 'get_weather', input: { location: 'Barcelona' } },
    ]);
    assert.equal(message.stop_reason, 'tool_use');
    assert.deepEqual(message.usage, { input_tokens: 20, output_tokens: 30, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200 });
  });

  it('streams text and a tool call, keeps cache_control as a cache point, accounted as the messages surface', async () => {
    upstream.reply({ headers: EVENTSTREAM, body: bedrockBody('bedrock/converse-tool-use-claude3-sonnet.b64'), randomSplit: { seed: 13 } });
    const message = await anthropic(gw)
      .messages.stream({
        model: MODEL,
        max_tokens: 512,
        system: [{ type: 'text', text: 'You report the weather.', cache_control: { type: 'ephemeral' } }],
        tools: [{ name: 'get_weather', input_schema: { type: 'object' as const } }],
        messages: [{ role: 'user', content: 'Weather in Barcelona?' }],
      })
      .finalMessage();
    assert.deepEqual(message.content, [
      { type: 'text', text: 'Okay, let me check the weather for Barcelona using the available tool:' },
      { type: 'tool_use', id: 'tooluse_yypYDr71TwCwByoyao4-Vg', name: 'get_weather', input: { location: 'Barcelona' } },
    ]);
    assert.equal(message.stop_reason, 'tool_use');
    // cache_control is honoured on Bedrock: a cache point after the marked block.
    assert.deepEqual((last().json as { system: unknown }).system, [{ text: 'You report the weather.' }, { cachePoint: { type: 'default' } }]);
    const row = await rowOf(gw, message);
    assert.deepEqual([row.surface, row.provider, row.usage.input_tokens, row.usage.output_tokens], ['messages', 'bedrock', 236, 58]);
  });
});

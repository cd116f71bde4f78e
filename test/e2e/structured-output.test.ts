import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateObject, streamObject } from 'ai';
import { zodResponseFormat, zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { anthropicStreamBody } from '../helpers/anthropic-fixtures.ts';
import { eventMessage } from '../helpers/bedrock-fixtures.ts';
import type { RecordedRequest } from '../helpers/fake-upstream.ts';
import { useUpstreamGateway } from '../helpers/gateway.ts';

/**
 * response_format on Anthropic, through the clients that use it: the openai SDK's parse() and the
 * Vercel AI SDK's generateObject / streamObject. Claude before 4.5 answers through sluice's forced
 * tool (its input comes back as the message content, finish reason stop); Claude 4.5 and later
 * constrain their text themselves (output_config.format). The same on Bedrock (Converse: the forced
 * tool, or outputConfig.textFormat for Claude 4.5 and the open-weight models), and on Gemini
 * (responseJsonSchema); each also through the Responses surface's text.format.
 */
const ANSWER_TOOL = 'sluice_structured_output';
const place = z.object({ latitude: z.string(), longitude: z.string() });
const answer = { latitude: '52.5200', longitude: '13.4050' };
const OLD = 'anthropic/claude-3-7-sonnet-latest';
const NATIVE = 'anthropic/claude-sonnet-4-5';

const frame = (payload: Record<string, unknown>) => `event: ${payload.type}\ndata: ${JSON.stringify(payload)}\n\n`;

/** What Anthropic would answer to the request sluice sent (the recorded tool call, renamed, for the tool). */
function anthropicReply(req: RecordedRequest) {
  const body = req.json as { stream?: boolean; tools?: { name: string }[]; output_config?: unknown };
  const forced = body.tools?.some((t) => t.name === ANSWER_TOOL) === true;
  const usage = { input_tokens: 20, output_tokens: 12 };
  if (!body.stream) {
    const content = forced
      ? [{ type: 'tool_use', id: 'toolu_1', name: ANSWER_TOOL, input: answer }]
      : [{ type: 'text', text: JSON.stringify(answer) }];
    const message = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude',
      content,
      stop_reason: forced ? 'tool_use' : 'end_turn',
      usage,
    };
    return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(message) };
  }
  if (forced) {
    const recorded = anthropicStreamBody('anthropic/tool-use.sse').toString('utf8');
    return { body: recorded.replaceAll('"name":"weather"', `"name":"${ANSWER_TOOL}"`), randomSplit: { seed: 11, maxPiece: 30 } };
  }
  const json = JSON.stringify(answer);
  return {
    body:
      frame({ type: 'message_start', message: { id: 'msg_2', model: 'claude-sonnet-4-5', content: [], usage } }) +
      frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
      frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: json.slice(0, 15) } }) +
      frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: json.slice(15) } }) +
      frame({ type: 'content_block_stop', index: 0 }) +
      frame({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage }) +
      frame({ type: 'message_stop' }),
  };
}

describe('structured output on Anthropic through real clients', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ env: { ANTHROPIC_API_KEY: 'sk-ant-e2e', ANTHROPIC_BASE_URL: url } }));
  const sent = () => upstream.requests.at(-1)!.json as Record<string, any>;
  const sdk = () => createOpenAICompatible({ name: 'sluice', baseURL: `${gw.url}/v1`, apiKey: 'unused', supportsStructuredOutputs: true });

  it('openai parse() on a model before 4.5: the forced tool, its input parsed as the message', async () => {
    upstream.reply(anthropicReply);
    const completion = await gw.client.chat.completions.parse({
      model: OLD,
      messages: [{ role: 'user', content: 'Where is Berlin?' }],
      response_format: zodResponseFormat(place, 'place'),
    });
    const choice = completion.choices[0];
    assert.deepEqual(choice.message.parsed, answer);
    assert.equal(choice.finish_reason, 'stop');
    assert.equal(choice.message.tool_calls, undefined);
    assert.deepEqual(sent().tool_choice, { type: 'tool', name: ANSWER_TOOL, disable_parallel_tool_use: true });
    assert.equal(sent().tools[0].input_schema.properties.latitude.type, 'string');
  });

  it('openai parse() on Claude 4.5: output_config.format, no tool', async () => {
    upstream.reply(anthropicReply);
    const completion = await gw.client.chat.completions.parse({
      model: NATIVE,
      messages: [{ role: 'user', content: 'Where is Berlin?' }],
      response_format: zodResponseFormat(place, 'place'),
    });
    assert.deepEqual(completion.choices[0].message.parsed, answer);
    assert.equal(sent().output_config.format.type, 'json_schema');
    assert.equal(sent().tools, undefined);
  });

  for (const model of [OLD, NATIVE]) {
    it(`Vercel AI SDK generateObject (${model})`, async () => {
      upstream.reply(anthropicReply);
      const { object, finishReason } = await generateObject({ model: sdk().chatModel(model), schema: place, prompt: 'Where is Berlin?' });
      assert.deepEqual(object, answer);
      assert.equal(finishReason, 'stop');
    });

    it(`Vercel AI SDK streamObject: partial objects as the JSON streams, then the whole (${model})`, async () => {
      upstream.reply(anthropicReply);
      const result = streamObject({ model: sdk().chatModel(model), schema: place, prompt: 'Where is Berlin?' });
      const partials: unknown[] = [];
      for await (const partial of result.partialObjectStream) partials.push(partial);
      assert.deepEqual(await result.object, answer);
      assert.deepEqual(partials.at(-1), answer);
      assert.ok(partials.length > 1, `streamed in ${partials.length} piece(s)`);
      assert.equal(await result.finishReason, 'stop');
    });
  }

  for (const stream of [false, true]) {
    it(`/v1/responses text.format through openai responses.parse() (${stream ? 'stream' : 'whole'})`, async () => {
      upstream.reply(anthropicReply);
      const body = { model: OLD, input: 'Where is Berlin?', text: { format: zodTextFormat(place, 'place') } };
      const response = stream ? await gw.client.responses.stream(body).finalResponse() : await gw.client.responses.parse(body);
      assert.deepEqual(response.output_parsed, answer);
      assert.equal(response.status, 'completed');
      assert.deepEqual(
        response.output.map((item) => item.type),
        ['message'],
      );
    });
  }

  it('json_object on any model is the forced tool taking any object', async () => {
    upstream.reply(anthropicReply);
    const completion = await gw.client.chat.completions.create({
      model: NATIVE,
      messages: [{ role: 'user', content: 'Where is Berlin? Answer in JSON.' }],
      response_format: { type: 'json_object' },
    });
    assert.deepEqual(JSON.parse(completion.choices[0].message.content!), answer);
    assert.deepEqual(sent().tools[0].input_schema, { type: 'object' });
  });
});

describe('structured output on Bedrock through real clients', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({
    env: { AWS_BEARER_TOKEN_BEDROCK: 'bedrock-e2e', AWS_ENDPOINT_URL_BEDROCK_RUNTIME: url },
  }));
  const sent = () => upstream.requests.at(-1)!.json as Record<string, any>;
  const CLAUDE_3 = 'bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0';
  /** Models whose own structured output Converse drives with outputConfig.textFormat. */
  const CLAUDE_4_5 = 'bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0';
  const GPT_OSS = 'bedrock/openai.gpt-oss-120b-1:0';
  const sdk = () => createOpenAICompatible({ name: 'sluice', baseURL: `${gw.url}/v1`, apiKey: 'unused', supportsStructuredOutputs: true });
  const usage = { inputTokens: 20, outputTokens: 12, totalTokens: 32 };

  /**
   * What Converse would answer to the request sluice sent: the forced tool's call when sluice asked
   * for one (a forced tool choice gets no preamble), else the JSON as text; streamed on /converse-stream.
   */
  function bedrockReply(req: RecordedRequest) {
    const body = req.json as { toolConfig?: { tools: { toolSpec: { name: string } }[] } };
    const forced = body.toolConfig?.tools.some((t) => t.toolSpec.name === ANSWER_TOOL) === true;
    const json = JSON.stringify(answer);
    if (!req.url.endsWith('/converse-stream')) {
      const content = forced ? [{ toolUse: { toolUseId: 't1', name: ANSWER_TOOL, input: answer } }] : [{ text: json }];
      return {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ output: { message: { role: 'assistant', content } }, stopReason: forced ? 'tool_use' : 'end_turn', usage }),
      };
    }
    const start = forced ? { start: { toolUse: { toolUseId: 't1', name: ANSWER_TOOL } } } : {};
    const delta = (piece: string) => (forced ? { toolUse: { input: piece } } : { text: piece });
    const body_ = Buffer.concat([
      eventMessage('messageStart', { role: 'assistant' }),
      eventMessage('contentBlockStart', { contentBlockIndex: 0, ...start }),
      eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: delta(json.slice(0, 10)) }),
      eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: delta(json.slice(10)) }),
      eventMessage('contentBlockStop', { contentBlockIndex: 0 }),
      eventMessage('messageStop', { stopReason: forced ? 'tool_use' : 'end_turn' }),
      eventMessage('metadata', { usage }),
    ]);
    return { headers: { 'content-type': 'application/vnd.amazon.eventstream' }, body: body_, randomSplit: { seed: 5 } };
  }

  /** The schema sluice gave Converse's outputConfig (a string holding the JSON Schema). */
  const nativeSchema = () => {
    const { textFormat } = sent().outputConfig;
    assert.equal(textFormat.type, 'json_schema');
    return JSON.parse(textFormat.structure.jsonSchema.schema) as { properties: Record<string, unknown> };
  };

  it('openai parse() on Claude 3.5: the forced tool, its input parsed as the message', async () => {
    upstream.reply(bedrockReply);
    const completion = await gw.client.chat.completions.parse({
      model: CLAUDE_3,
      messages: [{ role: 'user', content: 'Where is Berlin?' }],
      response_format: zodResponseFormat(place, 'place'),
    });
    assert.deepEqual(completion.choices[0].message.parsed, answer);
    assert.equal(completion.choices[0].finish_reason, 'stop');
    assert.deepEqual(sent().toolConfig.toolChoice, { tool: { name: ANSWER_TOOL } });
    assert.equal(sent().outputConfig, undefined);
  });

  for (const model of [CLAUDE_3, CLAUDE_4_5]) {
    const how = model === CLAUDE_3 ? 'the forced tool' : 'outputConfig.textFormat';
    it(`Vercel AI SDK generateObject on ${model}: ${how}`, async () => {
      upstream.reply(bedrockReply);
      const { object, finishReason } = await generateObject({ model: sdk().chatModel(model), schema: place, prompt: 'Where is Berlin?' });
      assert.deepEqual(object, answer);
      assert.equal(finishReason, 'stop');
      assert.ok(!upstream.requests.at(-1)!.url.endsWith('/converse-stream'));
      if (model === CLAUDE_3) assert.deepEqual(sent().toolConfig.toolChoice, { tool: { name: ANSWER_TOOL } });
      else assert.deepEqual(Object.keys(nativeSchema().properties), ['latitude', 'longitude']);
    });

    it(`Vercel AI SDK streamObject on ${model}: the answer streams as content (${how})`, async () => {
      upstream.reply(bedrockReply);
      const result = streamObject({ model: sdk().chatModel(model), schema: place, prompt: 'Where is Berlin?' });
      const partials: unknown[] = [];
      for await (const partial of result.partialObjectStream) partials.push(partial);
      assert.deepEqual(await result.object, answer);
      assert.ok(partials.length > 1, `streamed in ${partials.length} piece(s)`);
      assert.equal(await result.finishReason, 'stop');
      assert.ok(upstream.requests.at(-1)!.url.endsWith('/converse-stream'));
      if (model === CLAUDE_3) assert.equal(sent().outputConfig, undefined);
      else assert.equal(sent().toolConfig, undefined);
    });
  }

  for (const model of [CLAUDE_3, GPT_OSS]) {
    for (const stream of [false, true]) {
      it(`/v1/responses text.format through openai responses.parse() on ${model} (${stream ? 'stream' : 'whole'})`, async () => {
        upstream.reply(bedrockReply);
        const body = { model, input: 'Where is Berlin?', text: { format: zodTextFormat(place, 'place') } };
        const response = stream ? await gw.client.responses.stream(body).finalResponse() : await gw.client.responses.parse(body);
        assert.deepEqual(response.output_parsed, answer);
        assert.equal(response.status, 'completed');
        assert.deepEqual(
          response.output.map((item) => item.type),
          ['message'],
        );
        if (model === GPT_OSS) assert.deepEqual(Object.keys(nativeSchema().properties), ['latitude', 'longitude']);
        else assert.deepEqual(sent().toolConfig.toolChoice, { tool: { name: ANSWER_TOOL } });
      });
    }
  }
});

describe('structured output on Gemini through real clients', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ env: { GEMINI_API_KEY: 'AIza-e2e', GEMINI_BASE_URL: url } }));
  const sent = () => upstream.requests.at(-1)!.json as Record<string, any>;
  const sdk = () => createOpenAICompatible({ name: 'sluice', baseURL: `${gw.url}/v1`, apiKey: 'unused', supportsStructuredOutputs: true });
  const json = JSON.stringify(answer);
  const usageMetadata = { promptTokenCount: 8, candidatesTokenCount: 12, totalTokenCount: 20 };
  /** One GenerateContentResponse: JSON text, the last one with STOP and usage. */
  const response = (text: string, finishReason?: string) => ({
    candidates: [{ content: { role: 'model', parts: [{ text }] }, ...(finishReason && { finishReason }) }],
    ...(finishReason && { usageMetadata }),
  });
  /** Gemini's answer: on :streamGenerateContent the JSON text in two chunks, else all of it at once. */
  const geminiReply = (req: RecordedRequest) =>
    req.url.includes(':streamGenerateContent')
      ? { body: [response(json.slice(0, 12)), response(json.slice(12), 'STOP')].map((r) => `data: ${JSON.stringify(r)}\r\n\r\n`).join('') }
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(response(json, 'STOP')) };
  const assertSchemaSent = () => {
    const config = sent().generationConfig;
    assert.equal(config.responseMimeType, 'application/json');
    assert.deepEqual(Object.keys(config.responseJsonSchema.properties), ['latitude', 'longitude']);
  };

  it('Vercel AI SDK streamObject: responseMimeType and responseJsonSchema, the JSON streamed as content', async () => {
    upstream.reply(geminiReply);
    const result = streamObject({ model: sdk().chatModel('google/gemini-2.5-flash'), schema: place, prompt: 'Where is Berlin?' });
    for await (const _ of result.partialObjectStream);
    assert.deepEqual(await result.object, answer);
    assert.equal(await result.finishReason, 'stop');
    assertSchemaSent();
  });

  it('Vercel AI SDK generateObject: one :generateContent call with the schema', async () => {
    upstream.reply(geminiReply);
    const { object, finishReason } = await generateObject({
      model: sdk().chatModel('google/gemini-2.5-flash'),
      schema: place,
      prompt: 'Where is Berlin?',
    });
    assert.deepEqual(object, answer);
    assert.equal(finishReason, 'stop');
    assert.match(upstream.requests.at(-1)!.url, /:generateContent$/);
    assertSchemaSent();
  });

  it('openai parse(): the answer parsed as the message', async () => {
    upstream.reply(geminiReply);
    const completion = await gw.client.chat.completions.parse({
      model: 'google/gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Where is Berlin?' }],
      response_format: zodResponseFormat(place, 'place'),
    });
    assert.deepEqual(completion.choices[0].message.parsed, answer);
    assert.equal(completion.choices[0].finish_reason, 'stop');
    assertSchemaSent();
  });

  for (const stream of [false, true]) {
    it(`/v1/responses text.format through openai responses.parse() (${stream ? 'stream' : 'whole'})`, async () => {
      upstream.reply(geminiReply);
      const body = { model: 'google/gemini-2.5-flash', input: 'Where is Berlin?', text: { format: zodTextFormat(place, 'place') } };
      const response = stream ? await gw.client.responses.stream(body).finalResponse() : await gw.client.responses.parse(body);
      assert.deepEqual(response.output_parsed, answer);
      assert.equal(response.status, 'completed');
      assertSchemaSent();
    });
  }
});

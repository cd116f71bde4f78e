import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { toOpenAIUsage } from '../../src/protocol/canonical/usage.ts';
import {
  bedrockBody,
  eventMessage,
  exceptionMessage,
  expectedBedrockMessages,
  reencodedBody,
  SONNET4_SIGNATURE,
} from '../helpers/bedrock-fixtures.ts';
import { startFakeUpstream } from '../helpers/fake-upstream.ts';
import { readFixture } from '../helpers/fixtures.ts';
import { parseSse, rawStream, startGateway, useUpstreamGateway } from '../helpers/gateway.ts';

const EVENTSTREAM = { 'content-type': 'application/vnd.amazon.eventstream' };
/** What the recordings were made with (the model only shapes the URL). */
const MODEL = 'bedrock/us.anthropic.claude-sonnet-4-20250514-v1:0';

/** The chat-surface additions sluice puts on deltas and messages. */
interface ReasoningFields {
  reasoning_content?: string;
  reasoning_signature?: string;
}

interface Collected {
  content: string | null;
  reasoning: string | null;
  signature: string | null;
  toolCalls: { id: string; name: string; arguments: string }[];
  finish: string | null;
  usage: unknown;
  ids: Set<string>;
}

async function collect(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>): Promise<Collected> {
  const out: Collected = { content: null, reasoning: null, signature: null, toolCalls: [], finish: null, usage: null, ids: new Set() };
  for await (const chunk of stream) {
    out.ids.add(chunk.id);
    if (chunk.usage) out.usage = chunk.usage;
    for (const choice of chunk.choices) {
      const delta = choice.delta as typeof choice.delta & ReasoningFields;
      if (delta.content) out.content = (out.content ?? '') + delta.content;
      if (delta.reasoning_content) out.reasoning = (out.reasoning ?? '') + delta.reasoning_content;
      if (delta.reasoning_signature) out.signature = delta.reasoning_signature;
      for (const tc of delta.tool_calls ?? []) {
        out.toolCalls[tc.index] ??= { id: '', name: '', arguments: '' };
        if (tc.id) out.toolCalls[tc.index].id = tc.id;
        if (tc.function?.name) out.toolCalls[tc.index].name = tc.function.name;
        out.toolCalls[tc.index].arguments += tc.function?.arguments ?? '';
      }
      if (choice.finish_reason) out.finish = choice.finish_reason;
    }
  }
  return out;
}

describe('bedrock through the openai SDK', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({
    env: {
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL_BEDROCK_RUNTIME: url,
    },
  }));

  for (const [name, want] of Object.entries(expectedBedrockMessages)) {
    it(`streams ${name} (random reads) with what the recording says`, async () => {
      const body = name.endsWith('.jsonl') ? reencodedBody(name) : bedrockBody(name);
      upstream.reply({ headers: EVENTSTREAM, body, randomSplit: { seed: 11, maxPiece: 40 } });
      const got = await collect(
        await gw.client.chat.completions.create({
          model: MODEL,
          messages: [{ role: 'user', content: 'Hello' }],
          stream: true,
          stream_options: { include_usage: true },
        }),
      );
      assert.equal(got.ids.size, 1);
      assert.deepEqual(
        { content: got.content, reasoning: got.reasoning, signature: got.signature, toolCalls: got.toolCalls, finish: got.finish, usage: got.usage },
        {
          content: want.text,
          reasoning: want.reasoning,
          signature: want.reasoningSignature,
          toolCalls: want.toolCalls,
          finish: want.finishReason,
          usage: toOpenAIUsage(want.usage),
        },
      );
    });
  }

  it('sends a signed ConverseStream request for the model', async () => {
    upstream.reply({ headers: EVENTSTREAM, body: bedrockBody('bedrock/converse-text-nova2-lite.b64') });
    await collect(
      await gw.client.chat.completions.create({
        model: 'bedrock/us.amazon.nova-2-lite-v1:0',
        messages: [{ role: 'user', content: 'Count from 1 to 3' }],
        stream: true,
      }),
    );
    const sent = upstream.requests.at(-1)!;
    assert.equal(sent.method, 'POST');
    assert.equal(sent.url, '/model/us.amazon.nova-2-lite-v1%3A0/converse-stream');
    assert.equal(sent.headers.accept, 'application/vnd.amazon.eventstream');
    assert.match(
      String(sent.headers.authorization),
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/bedrock\/aws4_request, SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/,
    );
    assert.deepEqual(sent.json, JSON.parse(readFixture('bedrock/converse-text-nova2-lite.request.json').toString('utf8')));
  });

  it('answers non-streaming from Converse, and the signed thinking goes back on the next turn', async () => {
    upstream.reply({
      headers: { 'content-type': 'application/json' },
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
        metrics: { latencyMs: 800 },
      }),
    });
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } },
    ];
    const first = await gw.client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Weather in Barcelona?' }],
      tools,
      reasoning_effort: 'low',
    });
    assert.equal(upstream.requests.at(-1)!.url, '/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse');
    const message = first.choices[0].message as (typeof first.choices)[0]['message'] & ReasoningFields;
    assert.equal(first.choices[0].finish_reason, 'tool_calls');
    assert.equal(message.reasoning_content, 'Need the weather tool.');
    assert.equal(message.reasoning_signature, SONNET4_SIGNATURE);
    assert.deepEqual(message.tool_calls, [
      { id: 'tooluse_x1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Barcelona"}' } },
    ]);
    assert.deepEqual(first.usage, {
      prompt_tokens: 1220,
      completion_tokens: 30,
      total_tokens: 1250,
      prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 200 },
    });

    upstream.reply({ headers: EVENTSTREAM, body: bedrockBody('bedrock/converse-text-after-tool-nova-micro.b64') });
    const second = await collect(
      await gw.client.chat.completions.create({
        model: MODEL,
        messages: [
          { role: 'user', content: 'Weather in Barcelona?' },
          message as OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam,
          { role: 'tool', tool_call_id: 'tooluse_x1', content: 'Sunny, 30°C' },
        ],
        tools,
        reasoning_effort: 'low',
        stream: true,
      }),
    );
    assert.equal(second.content, 'The current temperature in Paris, the capital of France, is 30°C.');
    const sent = upstream.requests.at(-1)!.json as { messages: unknown[]; additionalModelRequestFields: unknown };
    assert.deepEqual(sent.messages, [
      { role: 'user', content: [{ text: 'Weather in Barcelona?' }] },
      {
        role: 'assistant',
        content: [
          { reasoningContent: { reasoningText: { text: 'Need the weather tool.', signature: SONNET4_SIGNATURE } } },
          { toolUse: { toolUseId: 'tooluse_x1', name: 'get_weather', input: { location: 'Barcelona' } } },
        ],
      },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_x1', content: [{ text: 'Sunny, 30°C' }] } }] },
    ]);
    assert.deepEqual(sent.additionalModelRequestFields, { thinking: { type: 'enabled', budget_tokens: 2048 } });
  });

  it('a Bedrock 400 before the stream is an SDK BadRequestError with its message', async () => {
    upstream.reply({
      status: 400,
      headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
      body: readFixture('bedrock/converse-error-400-invalid-model.json'),
    });
    await assert.rejects(
      gw.client.chat.completions.create({
        model: 'bedrock/us.does-not-exist-model-v1:0',
        messages: [{ role: 'user', content: 'hello' }],
        stream: true,
      }),
      (err: unknown) => {
        assert.ok(err instanceof OpenAI.BadRequestError);
        assert.equal(err.status, 400);
        assert.equal(err.message, '400 The provided model identifier is invalid.');
        return true;
      },
    );
  });

  it('a parameter Converse cannot honour is a 400 from sluice naming it, before any upstream call', async () => {
    const before = upstream.requests.length;
    await assert.rejects(
      gw.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], seed: 3 }),
      (err: unknown) => {
        assert.ok(err instanceof OpenAI.BadRequestError);
        assert.equal(err.param, 'seed');
        return true;
      },
    );
    assert.equal(upstream.requests.length, before);
  });

  it('a throttling exception before any output is an HTTP 429 with the message', async () => {
    upstream.reply({
      headers: EVENTSTREAM,
      body: Buffer.concat([
        eventMessage('messageStart', { role: 'assistant' }),
        exceptionMessage('throttlingException', 'Too many tokens, please wait before trying again.'),
      ]),
    });
    await assert.rejects(
      gw.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true }),
      (err: unknown) => {
        assert.ok(err instanceof OpenAI.RateLimitError);
        assert.equal(err.status, 429);
        assert.equal(err.message, '429 Too many tokens, please wait before trying again.');
        return true;
      },
    );
  });

  it('an exception after output is an error frame, then [DONE]', async () => {
    upstream.reply({
      headers: EVENTSTREAM,
      body: Buffer.concat([
        eventMessage('messageStart', { role: 'assistant' }),
        eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Once upon' } }),
        exceptionMessage('modelStreamErrorException', 'The model stream was interrupted.'),
      ]),
      randomSplit: { seed: 5, maxPiece: 30 },
    });
    const { status, text } = await rawStream(gw.url, { model: MODEL, messages: [{ role: 'user', content: 'story' }], stream: true });
    assert.equal(status, 200);
    const { frames } = parseSse(text);
    assert.equal(frames.at(-1)?.data, '[DONE]');
    assert.deepEqual(JSON.parse(frames.at(-2)!.data), {
      error: {
        message: 'The model stream was interrupted.',
        type: 'upstream_error',
        code: 'upstream_error',
        upstream: { status: 200, type: 'modelStreamErrorException', code: null },
      },
    });
    const chunks = frames.slice(0, -2).map((f) => JSON.parse(f.data) as { choices: { delta: { content?: string } }[] });
    assert.equal(chunks.map((c) => c.choices[0].delta.content ?? '').join(''), 'Once upon');
  });

  it('a stream cut inside a message is an error, not a silent end', async () => {
    const body = bedrockBody('bedrock/converse-text-after-tool-nova-micro.b64');
    upstream.reply({ headers: EVENTSTREAM, body: body.subarray(0, body.length - 10) });
    const { status, text } = await rawStream(gw.url, { model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true });
    assert.equal(status, 200);
    const { frames } = parseSse(text);
    assert.equal(frames.at(-1)?.data, '[DONE]');
    assert.equal(JSON.parse(frames.at(-2)!.data).error.code, 'upstream_malformed_stream');
  });
});

describe('bedrock with a Bedrock API key', () => {
  it('sends it as a bearer token (no SigV4) and answers the 404 hint when not configured', async () => {
    const upstream = await startFakeUpstream();
    const gw = await startGateway({}, { AWS_BEARER_TOKEN_BEDROCK: 'bedrock-api-key', AWS_ENDPOINT_URL_BEDROCK_RUNTIME: upstream.url });
    const off = await startGateway({}, {});
    try {
      upstream.reply({
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          output: { message: { content: [{ text: 'Hi' }] } },
          stopReason: 'end_turn',
          usage: { inputTokens: 2, outputTokens: 1 },
        }),
      });
      const done = await gw.client.chat.completions.create({ model: 'bedrock/amazon.nova-micro-v1:0', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(done.choices[0].message.content, 'Hi');
      assert.equal(upstream.requests.at(-1)!.headers.authorization, 'Bearer bedrock-api-key');
      await assert.rejects(
        off.client.chat.completions.create({ model: 'bedrock/amazon.nova-micro-v1:0', messages: [{ role: 'user', content: 'hi' }] }),
        (err: unknown) => {
          assert.ok(err instanceof OpenAI.NotFoundError);
          assert.match(err.message, /set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY \(or AWS_BEARER_TOKEN_BEDROCK\)/);
          return true;
        },
      );
    } finally {
      await gw.close();
      await off.close();
      await upstream.close();
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import OpenAI from 'openai';
import { parseSse, rawStream, useUpstreamGateway } from '../helpers/gateway.ts';
import { geminiPayloads, geminiResponseOf, geminiStreamBody } from '../helpers/gemini-fixtures.ts';
import { collect } from '../helpers/collect-chat-stream.ts';

/** Chat chunk deltas and messages carry sluice's reasoning fields next to the SDK's known ones. */
type Message = OpenAI.Chat.Completions.ChatCompletionMessage & { reasoning_content?: string; reasoning_signature?: string };

/** The usage numbers a client reads, whatever extra fields sluice adds. */
const counts = (u: OpenAI.CompletionUsage | undefined) => ({
  prompt: u?.prompt_tokens,
  completion: u?.completion_tokens,
  total: u?.total_tokens,
  reasoning: u?.completion_tokens_details?.reasoning_tokens,
  cached: u?.prompt_tokens_details?.cached_tokens,
});

/** What the recording's parts say, read straight from its payloads. */
function recorded(name: string) {
  const parts = geminiPayloads(name).flatMap((p) => p.candidates?.[0]?.content?.parts ?? []) as {
    text?: string;
    thought?: boolean;
    thoughtSignature?: string;
  }[];
  return {
    reasoning: parts
      .filter((p) => p.thought)
      .map((p) => p.text)
      .join(''),
    content: parts
      .filter((p) => !p.thought)
      .map((p) => p.text ?? '')
      .join(''),
    signature: parts.find((p) => p.thoughtSignature)?.thoughtSignature,
  };
}

const frame = (payload: unknown) => `data: ${JSON.stringify(payload)}\r\n\r\n`;
const textChunk = (text: string) =>
  frame({ candidates: [{ content: { role: 'model', parts: [{ text }] } }], modelVersion: 'gemini-2.5-flash', responseId: 'e2e' });
const overloaded = frame({ error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } });
const jsonReply = (body: unknown, status = 200) => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('google (Gemini) through the openai SDK', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ env: { GEMINI_API_KEY: 'AIza-e2e', GEMINI_BASE_URL: url } }));

  const last = () => upstream.requests.at(-1);

  it('streams thought summaries as reasoning_content, then the answer, with usage', async () => {
    const name = 'gemini/thinking-2.5-pro.sse';
    upstream.reply({ body: geminiStreamBody(name), randomSplit: { seed: 11, maxPiece: 64 } });
    const got = await collect(
      await gw.client.chat.completions.create({
        model: 'google/gemini-2.5-pro',
        messages: [
          { role: 'system', content: 'You are a helpful assistant.' },
          { role: 'user', content: 'How do I cross the street?' },
        ],
        reasoning_effort: 'high',
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    const want = recorded(name);
    assert.equal(got.reasoning, want.reasoning);
    assert.equal(got.content, want.content);
    assert.equal(got.signature, want.signature);
    assert.deepEqual(got.calls, []);
    assert.equal(got.finish, 'stop');
    assert.deepEqual(counts(got.usage), { prompt: 34, completion: 1256, total: 1290, reasoning: 787, cached: undefined });

    const sent = last();
    assert.equal(sent?.url, '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
    assert.equal(sent?.headers['x-goog-api-key'], 'AIza-e2e');
    assert.deepEqual(sent?.json, {
      contents: [{ role: 'user', parts: [{ text: 'How do I cross the street?' }] }],
      systemInstruction: { parts: [{ text: 'You are a helpful assistant.' }] },
      generationConfig: { thinkingConfig: { thinkingBudget: 24576, includeThoughts: true } },
    });
  });

  it('streams Vertex streamed-argument calls as two tool calls with distinct indexes', async () => {
    upstream.reply({ body: geminiStreamBody('gemini/vertex-streamed-function-call-args.jsonl'), randomSplit: { seed: 5, maxPiece: 30 } });
    const got = await collect(
      await gw.client.chat.completions.create({
        model: 'google/gemini-3.1-pro-preview',
        messages: [{ role: 'user', content: 'Weather in Boston and San Francisco?' }],
        tools: [{ type: 'function', function: { name: 'getWeather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    assert.deepEqual(
      got.calls.map((c) => [c.name, c.args]),
      [
        ['getWeather', '{"location":"Boston"}'],
        ['getWeather', '{"location":"San Francisco"}'],
      ],
    );
    assert.ok(got.calls.every((c) => c.id?.startsWith('call_')));
    assert.notEqual(got.calls[0].id, got.calls[1].id);
    assert.equal(got.signature, recorded('gemini/vertex-streamed-function-call-args.jsonl').signature);
    assert.equal(got.finish, 'tool_calls');
    assert.deepEqual(counts(got.usage), { prompt: 26, completion: 155, total: 181, reasoning: 132, cached: undefined });
  });

  it('round-trips the signature: a streamed call, then the next turn carries it back on the call', async () => {
    upstream.reply({ body: geminiStreamBody('gemini/function-call-thought-signature-2.5-flash.sse'), randomSplit: { seed: 2, maxPiece: 50 } });
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
      {
        type: 'function',
        function: { name: 'weather', parameters: { type: 'object', properties: { latitude: { type: 'string' }, longitude: { type: 'string' } } } },
      },
    ];
    const question = { role: 'user' as const, content: "What's the weather in Berlin? (52.5200, 13.4050)" };
    const got = await collect(
      await gw.client.chat.completions.create({ model: 'google/gemini-2.5-flash', messages: [question], tools, stream: true }),
    );
    assert.equal(got.finish, 'tool_calls');
    assert.deepEqual(
      got.calls.map((c) => [c.name, c.args]),
      [['weather', '{"latitude":"52.5200","longitude":"13.4050"}']],
    );
    const signature = recorded('gemini/function-call-thought-signature-2.5-flash.sse').signature;
    assert.equal(got.signature, signature);

    upstream.reply({ body: geminiStreamBody('gemini/text-after-function-response-2.5-flash.sse') });
    const callId = got.calls[0].id ?? '';
    const assistant = {
      role: 'assistant',
      content: null,
      reasoning_signature: got.signature,
      tool_calls: [{ id: callId, type: 'function', function: { name: 'weather', arguments: got.calls[0].args } }],
    } as OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam;
    const answer = await collect(
      await gw.client.chat.completions.create({
        model: 'google/gemini-2.5-flash',
        messages: [question, assistant, { role: 'tool', tool_call_id: callId, content: '15°C, wind 10 km/h' }],
        tools,
        stream: true,
      }),
    );
    assert.equal(answer.content, 'The weather in Berlin is 15°C with a wind of 10 km/h.');
    assert.equal(answer.finish, 'stop');
    const sent = last()?.json as { contents: unknown[] };
    assert.deepEqual(sent.contents.slice(1), [
      {
        role: 'model',
        parts: [{ functionCall: { id: callId, name: 'weather', args: { latitude: '52.5200', longitude: '13.4050' } }, thoughtSignature: signature }],
      },
      { role: 'user', parts: [{ functionResponse: { id: callId, name: 'weather', response: { output: '15°C, wind 10 km/h' } } }] },
    ]);
  });

  it('answers a non-streaming request from :generateContent, reasoning and signature included', async () => {
    const name = 'gemini/thinking-2.5-pro.sse';
    upstream.reply(jsonReply(geminiResponseOf(name)));
    const completion = await gw.client.chat.completions.create({
      model: 'google/gemini-2.5-pro',
      messages: [{ role: 'user', content: 'How do I cross the street?' }],
      reasoning_effort: 'low',
    });
    const want = recorded(name);
    const message = completion.choices[0].message as Message;
    assert.equal(message.content, want.content);
    assert.equal(message.reasoning_content, want.reasoning);
    assert.equal(message.reasoning_signature, want.signature);
    assert.equal(completion.choices[0].finish_reason, 'stop');
    assert.equal(completion.model, 'google/gemini-2.5-pro');
    assert.deepEqual(counts(completion.usage), { prompt: 34, completion: 1256, total: 1290, reasoning: 787, cached: undefined });
    assert.equal(last()?.url, '/v1beta/models/gemini-2.5-pro:generateContent');
  });

  it('answers a non-streaming tool call with content null and finish_reason tool_calls', async () => {
    upstream.reply(jsonReply(geminiResponseOf('gemini/function-call-2.0-flash.sse')));
    const completion = await gw.client.chat.completions.create({
      model: 'google/gemini-2.0-flash',
      messages: [{ role: 'user', content: 'What is the temperature of the capital of France?' }],
      tools: [{ type: 'function', function: { name: 'get_capital', parameters: { type: 'object', properties: { country: { type: 'string' } } } } }],
    });
    const choice = completion.choices[0];
    assert.equal(choice.message.content, null);
    assert.equal(choice.finish_reason, 'tool_calls');
    const calls = (choice.message.tool_calls ?? []) as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[];
    assert.deepEqual(
      calls.map((c) => [c.type, c.function.name, c.function.arguments]),
      [['function', 'get_capital', '{"country":"France"}']],
    );
    assert.deepEqual(counts(completion.usage), { prompt: 52, completion: 5, total: 57, reasoning: undefined, cached: undefined });
  });

  it('a provider error before the stream is an SDK exception with the right status and Google message', async () => {
    upstream.reply(jsonReply({ error: { code: 429, message: 'You exceeded your current quota.', status: 'RESOURCE_EXHAUSTED' } }, 429));
    await assert.rejects(
      gw.client.chat.completions.create({ model: 'google/gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }], stream: true }),
      (err: unknown) => err instanceof OpenAI.RateLimitError && err.status === 429 && err.message.includes('You exceeded your current quota.'),
    );
    upstream.reply(jsonReply({ error: { code: 400, message: 'Please use a valid role: user, model.', status: 'INVALID_ARGUMENT' } }, 400));
    await assert.rejects(
      gw.client.chat.completions.create({ model: 'google/gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }] }),
      (err: unknown) => err instanceof OpenAI.BadRequestError && err.message.includes('Please use a valid role: user, model.'),
    );
  });

  it('a parameter Gemini cannot honour is a 400 naming it, before anything goes upstream', async () => {
    const before = upstream.requests.length;
    await assert.rejects(
      gw.client.chat.completions.create({ model: 'google/gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }], logit_bias: { '1': 2 } }),
      (err: unknown) => err instanceof OpenAI.BadRequestError && err.param === 'logit_bias',
    );
    assert.equal(upstream.requests.length, before);
  });

  it('an error event before any output becomes the HTTP error it stands for', async () => {
    upstream.reply({ body: overloaded });
    await assert.rejects(
      gw.client.chat.completions.create({ model: 'google/gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }], stream: true }),
      (err: unknown) =>
        err instanceof OpenAI.APIError && err.status === 503 && err.message.includes('The model is overloaded. Please try again later.'),
    );
  });

  it('an error event after output is an error frame, then [DONE]', async () => {
    upstream.reply({ pieces: [textChunk('Hello'), overloaded] });
    const { status, text } = await rawStream(gw.url, {
      model: 'google/gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
    assert.equal(status, 200);
    const { frames } = parseSse(text);
    assert.equal(frames.at(-1)?.data, '[DONE]');
    assert.deepEqual(JSON.parse(frames.at(-2)?.data ?? ''), {
      error: {
        message: 'The model is overloaded. Please try again later.',
        type: 'server_error',
        code: 'upstream_overloaded',
        upstream: { status: 200, type: null, code: null },
      },
    });
    const content = frames
      .slice(0, -2)
      .map((f) => JSON.parse(f.data).choices[0].delta.content ?? '')
      .join('');
    assert.equal(content, 'Hello');
  });
});

describe('google: a usage block the price registry refuses', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({ env: { GEMINI_API_KEY: 'AIza-e2e', GEMINI_BASE_URL: url } }));

  // Regression: cachedContentTokenCount above promptTokenCount made the price registry throw in the
  // stream's closing, and the stream never ended.
  it('more cached tokens than input: the stream still ends with its usage and [DONE], and the record is written', async () => {
    const chunk = {
      candidates: [{ content: { role: 'model', parts: [{ text: 'Hi.' }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 8, candidatesTokenCount: 2, totalTokenCount: 10, cachedContentTokenCount: 2 ** 53 },
      modelVersion: 'gemini-2.5-flash',
    };
    upstream.reply({ headers: { 'content-type': 'text/event-stream' }, body: `data: ${JSON.stringify(chunk)}\r\n\r\n` });
    const { text, headers } = await rawStream(gw.url, {
      model: 'google/gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { frames } = parseSse(text);
    assert.equal(frames.at(-1)?.data, '[DONE]');
    const usage = JSON.parse(frames.at(-2)?.data ?? '{}').usage;
    assert.equal(usage.prompt_tokens, 8);
    const record = await fetch(`${gw.url}/v1/requests/${headers.get('x-request-id')}`).then((r) => r.json() as Promise<Record<string, any>>);
    assert.equal(record.outcome, 'ok');
  });
});

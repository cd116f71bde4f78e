import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI, { APIError } from 'openai';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { openAIStreamBody, readFixture } from '../helpers/fixtures.ts';
import { parseSse, rawStream, startGateway, type TestGateway } from '../helpers/gateway.ts';
import {
  type ExpectedMessage,
  expectedFromRecording,
  expectedUsage,
  foldChunks,
  openAICompatibleRecordings,
  type RawAnnotation,
  withThinkTagsAsReasoning,
} from '../helpers/openai-recordings.ts';

const request = {
  messages: [{ role: 'user' as const, content: 'hi' }],
  stream: true as const,
  stream_options: { include_usage: true },
};

/** Small recordings also replayed with a pause between reads. */
const slowed = new Set([
  'mistral/text-small.sse',
  'mistral/tool-call-small.sse',
  'openai-chat/gpt4o-mini-tool-call.sse',
  'openrouter/text-claude-haiku45.sse',
]);

async function streamWithSdk(client: OpenAI, model: string): Promise<{ chunks: ChatCompletionChunk[]; error: unknown }> {
  const chunks: ChatCompletionChunk[] = [];
  try {
    const stream = await client.chat.completions.create({ model, ...request });
    for await (const chunk of stream) chunks.push(chunk);
  } catch (error) {
    return { chunks, error };
  }
  return { chunks, error: null };
}

/** The message the client rebuilt, in the expectation's shape (sluice's usage is OpenAI's already). */
function rebuilt(chunks: ChatCompletionChunk[]): Omit<ExpectedMessage, 'rawUsage' | 'error'> {
  const { choices, usage } = foldChunks(chunks);
  return { choices, usage: usage && expectedUsage(usage) };
}

/** The chat.completion.chunk stream contract, on what the SDK yielded. */
function assertStreamContract(chunks: ChatCompletionChunk[], expected: ExpectedMessage, failed: boolean): void {
  assert.ok(chunks.length > 0);
  assert.equal(new Set(chunks.map((c) => c.id)).size, 1, 'one id for every chunk');
  assert.ok(chunks.every((c) => c.model === 'up/recorded' && c.object === 'chat.completion.chunk'));
  // The reference fold also reads upstream spellings; sluice must only ever send reasoning_content.
  assert.ok(chunks.every((c) => c.choices.every((x) => !('reasoning' in x.delta) && typeof (x.delta.content ?? '') === 'string')));
  expected.choices.forEach((choice, index) => {
    const mine = chunks.flatMap((c) => c.choices.filter((x) => x.index === index));
    assert.equal(mine[0]?.delta.role, 'assistant', `choice ${index} opens with the assistant role`);
    const starts = mine.flatMap((c) => (c.delta.tool_calls ?? []).filter((t) => t.id !== undefined).map((t) => t.index));
    assert.deepEqual(
      starts,
      choice.toolCalls.map((_, i) => i),
      `choice ${index}: one distinct index per tool call`,
    );
    const finishes = mine.filter((c) => c.finish_reason !== null).length;
    assert.equal(finishes, choice.finishReason === null ? 0 : 1, `choice ${index}: exactly one finish_reason`);
  });
  // A failed stream too ends with the usage so far (issue 12's end-of-stream order: finish,
  // usage, error frame, [DONE]); the SDK stops at the error frame, so the usage chunk is the last
  // chunk it yields either way.
  const usageChunks = chunks.filter((c) => c.usage);
  assert.equal(usageChunks.length, 1, failed ? 'the usage so far, before the error frame' : 'one usage chunk');
  assert.equal(usageChunks[0], chunks.at(-1), 'the usage chunk comes last');
  assert.deepEqual(usageChunks[0]?.choices, []);
}

describe('every OpenAI-compatible recording, through sluice to the openai SDK', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    const server = { base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' };
    gw = await startGateway({ providers: { up: server, think: { ...server, think_tags: 'reasoning' } } });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  openAICompatibleRecordings.forEach((name, i) => {
    it(`streams ${name} to the SDK exactly as recorded`, async () => {
      const expected = expectedFromRecording(name);
      upstream.reply({
        body: openAIStreamBody(name),
        randomSplit: { seed: 1000 + i },
        delayMs: slowed.has(name) ? 3 : undefined,
      });

      const { chunks, error } = await streamWithSdk(gw.client, 'up/recorded');
      if (expected.error === null) {
        assert.equal(error, null);
        const got = rebuilt(chunks);
        assert.deepEqual(got.choices, expected.choices);
        if (expected.usage) assert.deepEqual(got.usage, expected.usage);
        else {
          // The upstream reported no usage: sluice counts it itself (the accounting's numbers).
          const u = got.usage;
          assert.ok(u && u.prompt_tokens > 0 && u.completion_tokens > 0, JSON.stringify(u));
          assert.equal(u.total_tokens, u.prompt_tokens + u.completion_tokens);
        }
      } else {
        // The SDK raises APIError on a data frame with an `error` key, carrying the upstream message.
        assert.ok(error instanceof APIError, String(error));
        assert.equal(error.message, expected.error);
        // Everything before the error arrived, then the usage so far (the upstream's, or counted).
        const got = rebuilt(chunks);
        assert.deepEqual(got.choices, expected.choices);
        const u = got.usage;
        assert.ok(u && u.prompt_tokens > 0 && u.total_tokens === u.prompt_tokens + u.completion_tokens, JSON.stringify(u));
      }
      assertStreamContract(chunks, expected, expected.error !== null);

      const raw = await rawStream(gw.url, { model: 'up/recorded', ...request });
      assert.equal(raw.status, 200);
      const { frames } = parseSse(raw.text);
      assert.equal(frames.at(-1)?.data, '[DONE]');
      if (expected.error !== null) {
        assert.equal(JSON.parse(frames.at(-2)?.data ?? '').error.message, expected.error);
      } else {
        assert.deepEqual(JSON.parse(frames.at(-2)?.data ?? '').choices, []);
      }
    });
  });

  it('Groq: the recorded tool_use_failed error frame keeps its 400-class type and code', async () => {
    upstream.reply({ body: openAIStreamBody('groq/midstream-error-tool-use-failed.sse'), randomSplit: { seed: 5 } });
    const { frames } = parseSse((await rawStream(gw.url, { model: 'up/recorded', ...request })).text);
    const error = JSON.parse(frames.at(-2)?.data ?? '').error;
    assert.deepEqual(
      { type: error.type, code: error.code, upstream: error.upstream?.code },
      { type: 'invalid_request_error', code: 'invalid_request', upstream: 'tool_use_failed' },
    );
  });

  it('Groq: the same error before any output is an HTTP 400 with the upstream message', async () => {
    const body = openAIStreamBody('groq/midstream-error-tool-use-failed.sse').toString('utf8');
    upstream.reply({ body: body.slice(body.indexOf('event: error')) });
    const { error } = await streamWithSdk(gw.client, 'up/recorded');
    assert.ok(error instanceof APIError);
    assert.equal(error.status, 400);
    assert.match(error.message, /^400 Tool call validation failed: /);
  });

  it('OpenRouter web search: the recorded request (a hosted openrouter:web_search tool) goes upstream as sent, the citations come back', async () => {
    const name = 'openrouter/web-search-annotations.sse';
    // The SDK's types know only function tools; the body is what OpenRouter's own clients send.
    const recorded = JSON.parse(
      readFixture('openrouter/web-search-annotations.request.json').toString('utf8'),
    ) as ChatCompletionCreateParamsStreaming;
    upstream.reply({ body: openAIStreamBody(name), randomSplit: { seed: 7 } });
    const stream = await gw.client.chat.completions.create({ ...recorded, model: 'up/deepseek/deepseek-chat' });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const sent = upstream.requests.at(-1)?.json as { tools: unknown; model: string };
    assert.deepEqual([sent.model, sent.tools], ['deepseek/deepseek-chat', recorded.tools]);
    const [choice] = rebuilt(chunks).choices;
    assert.equal(choice.annotations.length, 5);
    assert.deepEqual(choice, expectedFromRecording(name).choices[0]);
  });

  it('Hugging Face: with think_tags: reasoning the <think> block arrives as reasoning_content', async () => {
    const name = 'huggingface/router-together-deepseek-r1-think-tags.sse';
    upstream.reply({ body: openAIStreamBody(name), randomSplit: { seed: 42, maxPiece: 9 } });
    const { chunks, error } = await streamWithSdk(gw.client, 'think/recorded');
    assert.equal(error, null);
    const expected = withThinkTagsAsReasoning(expectedFromRecording(name));
    assert.deepEqual(rebuilt(chunks), { choices: expected.choices, usage: expected.usage });
  });

  describe('the non-streaming path', () => {
    /** A chat.completion body carrying what the recording says, with its usage object as sent. */
    function completionBody(expected: ExpectedMessage): Record<string, unknown> {
      return {
        id: 'chatcmpl-recorded',
        object: 'chat.completion',
        created: 1,
        model: 'recorded',
        choices: expected.choices.map((c, index) => ({
          index,
          message: {
            role: 'assistant',
            content: c.content,
            refusal: c.refusal,
            ...(c.reasoning !== null && { reasoning_content: c.reasoning }),
            ...(c.toolCalls.length > 0 && {
              tool_calls: c.toolCalls.map((t) => ({ id: t.id, type: 'function', function: { name: t.name, arguments: t.arguments } })),
            }),
            ...(c.annotations.length > 0 && { annotations: c.annotations }),
          },
          logprobs: c.logprobs && { content: c.logprobs, refusal: null },
          finish_reason: c.finishReason,
        })),
        usage: expected.rawUsage,
      };
    }

    function fromCompletion(completion: ChatCompletion): Omit<ExpectedMessage, 'rawUsage' | 'error'> {
      return {
        choices: completion.choices.map((c) => ({
          content: c.message.content || null,
          reasoning: (c.message as { reasoning_content?: string }).reasoning_content ?? null,
          refusal: c.message.refusal ?? null,
          toolCalls: (c.message.tool_calls ?? []).flatMap((t) =>
            t.type === 'function' ? [{ id: t.id, name: t.function.name, arguments: t.function.arguments }] : [],
          ),
          annotations: (c.message.annotations ?? []) as RawAnnotation[],
          finishReason: c.finish_reason,
          logprobs: c.logprobs?.content ?? null,
        })),
        usage: completion.usage ? expectedUsage(completion.usage) : null,
      };
    }

    for (const name of [
      'openai-chat/gpt4o-parallel-tool-calls.sse',
      'openai-chat/gpt4o-n3-multiple-choices.sse',
      'openai-chat/gpt4o-content-logprobs.sse',
      'openai-chat/gpt4o-refusal-structured-output.sse',
      'deepseek/reasoner-reasoning-content.jsonl',
      'xai/chat-grok3-mini-tool-call.jsonl',
      'openrouter/web-search-annotations.sse',
    ]) {
      it(`answers ${name} as one chat.completion`, async () => {
        const expected = expectedFromRecording(name);
        upstream.reply({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(completionBody(expected)) });
        const completion = await gw.client.chat.completions.create({ model: 'up/recorded', messages: request.messages });
        assert.equal(completion.model, 'up/recorded');
        assert.deepEqual(fromCompletion(completion), { choices: expected.choices, usage: expected.usage });
      });
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openAIStreamBody } from '../helpers/fixtures.ts';
import { parseSse, rawStream, startGateway, upstreamConfig, useUpstreamGateway } from '../helpers/gateway.ts';

describe('chat completions through the openai SDK', () => {
  const { upstream, gw } = useUpstreamGateway();

  it('streams parallel tool calls with distinct indexes and the usage chunk on opt-in', async () => {
    upstream.reply({ body: openAIStreamBody('openai-chat/gpt4o-parallel-tool-calls.sse'), randomSplit: { seed: 7 } });
    const stream = await gw.client.chat.completions.create({
      model: 'up/gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const ids = new Set<string>();
    const calls: Record<number, { id?: string; name?: string; args: string }> = {};
    let finish: string | null = null;
    let usage: unknown;
    for await (const chunk of stream) {
      ids.add(chunk.id);
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        for (const tc of choice.delta.tool_calls ?? []) {
          calls[tc.index] ??= { args: '' };
          if (tc.id) calls[tc.index].id = tc.id;
          if (tc.function?.name) calls[tc.index].name = tc.function.name;
          calls[tc.index].args += tc.function?.arguments ?? '';
        }
        if (choice.finish_reason) finish = choice.finish_reason;
      }
    }
    assert.equal(ids.size, 1);
    assert.deepEqual(Object.keys(calls), ['0', '1']);
    assert.equal(calls[0].name, 'get_country');
    assert.equal(calls[1].name, 'get_product_name');
    assert.ok(calls[0].id?.startsWith('call_'));
    assert.equal(finish, 'tool_calls');
    assert.deepEqual(usage, {
      prompt_tokens: 364,
      completion_tokens: 40,
      total_tokens: 404,
      // The recording's audio and Predicted Outputs details (all 0) are kept.
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    });
    // sluice always asks the upstream for usage, whatever the client asked.
    const sent = upstream.requests.at(-1)?.json as { stream_options?: unknown; model: string };
    assert.deepEqual(sent.stream_options, { include_usage: true });
    assert.equal(sent.model, 'gpt-4o');
  });

  it('strips the usage chunk when the client did not ask for it', async () => {
    upstream.reply({ body: openAIStreamBody('openai-chat/gpt4o-mini-text-after-tool.sse') });
    const { status, headers, text } = await rawStream(gw.url, {
      model: 'up/gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    assert.equal(status, 200);
    assert.equal(headers.get('content-type'), 'text/event-stream');
    assert.equal(headers.get('cache-control'), 'no-cache');
    assert.ok(headers.get('x-request-id'));
    const { frames } = parseSse(text);
    assert.equal(frames.at(-1)?.data, '[DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data));
    assert.ok(chunks.every((c) => c.choices.length === 1 && !('usage' in c)));
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
    assert.ok(chunks.every((c) => c.id === `chatcmpl-${headers.get('x-request-id')}`));
  });

  it('finishes at the upstream [DONE] even if the upstream then keeps the connection open', async () => {
    // An idle timeout far above the time the stream needs, so the check does not race a busy machine.
    const own = await startGateway({ ...upstreamConfig(upstream.url), stream: { idle_timeout_s: 5 } });
    try {
      const closed = upstream.closedEarly;
      upstream.reply({ body: openAIStreamBody('openai-chat/gpt4o-mini-text-after-tool.sse'), after: 'hang' });
      const started = Date.now();
      const { text } = await rawStream(own.url, { model: 'up/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
      // Well before the idle timeout: nothing can follow [DONE], so sluice does not wait for more.
      assert.ok(Date.now() - started < 2_500, `took ${Date.now() - started} ms`);
      const { frames } = parseSse(text);
      assert.equal(frames.at(-1)?.data, '[DONE]');
      assert.ok(!text.includes('"error"'));
      assert.equal(JSON.parse(frames.at(-2)?.data ?? '{}').choices[0].finish_reason, 'stop');
      // The hanging upstream response is read a while longer (so a normal one keeps its
      // connection reusable), then released rather than held open.
      await upstream.waitForEarlyClose(4000, closed + 1);
    } finally {
      await own.close();
    }
  });

  it('answers a non-streaming request with a chat.completion and usage', async () => {
    upstream.reply({
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'chatcmpl-x',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4o',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello!' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
      }),
    });
    const completion = await gw.client.chat.completions.create({
      model: 'up/gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(completion.choices[0].message.content, 'Hello!');
    assert.equal(completion.usage?.total_tokens, 7);
    assert.equal(completion.model, 'up/gpt-4o');
  });
});

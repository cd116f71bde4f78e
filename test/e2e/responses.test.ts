import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { APIError, NotFoundError } from 'openai';
import { openAIStreamBody } from '../helpers/fixtures.ts';
import { rawStream, requestRecord, type TestGateway, upstreamConfig, useUpstreamGateway } from '../helpers/gateway.ts';
import { expectedFromRecording, openAICompatibleRecordings } from '../helpers/openai-recordings.ts';
import { digest, expectedDigest, type ResponseDigest } from '../helpers/responses-client.ts';
import { checkResponsesStream } from '../helpers/responses-grammar.ts';

const SSE_UTF8 = 'text/event-stream; charset=utf-8';

/** POST /v1/responses read raw, checked against the event grammar. */
async function rawResponses(gw: TestGateway, body: Record<string, unknown>) {
  const raw = await rawStream(gw.url, { stream: true, ...body }, {}, '/v1/responses');
  assert.equal(raw.status, 200, raw.text);
  assert.equal(raw.headers.get('content-type'), SSE_UTF8);
  return { ...raw, ...checkResponsesStream(raw.text) };
}

async function sdkFinal(gw: TestGateway, body: { model: string; input: string; [k: string]: unknown }) {
  try {
    return { final: await gw.client.responses.stream(body).finalResponse(), error: null };
  } catch (error) {
    return { final: null, error };
  }
}

/** A chat.completion.chunk body, for upstream replies written by hand. */
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

describe('every OpenAI-compatible chat recording through /v1/responses', () => {
  const { upstream, gw } = useUpstreamGateway();

  openAICompatibleRecordings.forEach((name, i) => {
    it(`renders ${name} as a valid Responses stream holding what the recording says`, async () => {
      const expected = expectedFromRecording(name);
      const want = expectedDigest(expected);
      upstream.reply({ body: openAIStreamBody(name), randomSplit: { seed: 2000 + i } });
      const raw = await rawResponses(gw, { model: 'up/recorded', input: 'hi' });
      const fromWire = digest(raw.terminal.response);

      upstream.reply({ body: openAIStreamBody(name), randomSplit: { seed: 3000 + i } });
      const { final, error } = await sdkFinal(gw, { model: 'up/recorded', input: 'hi' });

      if (expected.error === null) {
        assert.equal(error, null);
        // No usage upstream: sluice's estimate (the grammar checked total = input + output).
        const got = want.usage === null ? { ...digest(final!), usage: null } : digest(final!);
        assert.deepEqual(got, want);
        assert.deepEqual(want.usage === null ? { ...fromWire, usage: null } : fromWire, want);
      } else {
        // `error` then response.failed carrying the upstream's message; the SDK raises on `error`.
        assert.ok(error instanceof APIError, String(error));
        assert.equal(error.message, expected.error);
        const [errorEvent] = raw.events.slice(-2);
        assert.equal(errorEvent.type, 'error');
        assert.equal(raw.terminal.response.error?.message, expected.error);
        // What came before the error is in the failed response (usage aside: an estimate, or none).
        const { usage: _got, ...gotPartial } = fromWire;
        const { usage: _want, ...wantPartial } = want;
        assert.deepEqual(gotPartial, wantPartial);
      }
    });
  });
});

describe('/v1/responses through the openai SDK', () => {
  const { upstream, gw } = useUpstreamGateway();

  describe('the mock provider', () => {
    const usage = (input: number, output: number, reasoning = 0) => ({
      input_tokens: input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: output,
      output_tokens_details: { reasoning_tokens: reasoning },
      total_tokens: input + output,
    });
    const none = { incomplete: null, reasoning: null, text: null, refusal: null, calls: [], annotations: [] };
    const cases: Record<string, ResponseDigest> = {
      'mock/echo': { ...none, status: 'completed', text: 'You said: hello there', usage: usage(5, 4) },
      'mock/reasoning': {
        ...none,
        status: 'completed',
        reasoning: 'The user wants their message repeated. I will echo it.',
        text: 'You said: hello there',
        usage: usage(5, 14, 10),
      },
      'mock/tools': {
        ...none,
        status: 'completed',
        calls: [{ call_id: 'call_mock_0', name: 'get_weather', arguments: '{"location": "Paris", "unit": "celsius"}' }],
        usage: usage(5, 4),
      },
    };
    for (const [model, want] of Object.entries(cases)) {
      it(`${model}: valid events, and finalResponse() holds what the mock produced`, async () => {
        const raw = await rawResponses(gw, { model, input: 'hello there' });
        assert.deepEqual(digest(raw.terminal.response), want);
        const { final, error } = await sdkFinal(gw, { model, input: 'hello there' });
        assert.equal(error, null);
        assert.deepEqual(digest(final!), want);
        assert.equal(final!.model, model);
      });
    }

    it('mock/error: the failure after output ends with error + response.failed, [DONE], and the SDK raises', async () => {
      const raw = await rawResponses(gw, { model: 'mock/error', input: 'hi' });
      const message = 'The mock provider failed mid-stream, as mock/error always does.';
      assert.deepEqual(raw.events.at(-2), {
        type: 'error',
        sequence_number: raw.events.length - 2,
        error: { type: 'upstream_error', code: 'upstream_error', message, param: null, upstream: { status: null, type: null, code: 'mock_failure' } },
      });
      assert.deepEqual(raw.terminal.response.error, { code: 'upstream_error', message });
      assert.equal(digest(raw.terminal.response).text, 'This answer will not finish');
      assert.equal(raw.terminal.response.output[0].status, 'incomplete');
      const { error } = await sdkFinal(gw, { model: 'mock/error', input: 'hi' });
      assert.ok(error instanceof APIError);
      assert.equal(error.message, message);
    });

    it('mock/unavailable: a failure before the stream is an HTTP error, as on the chat surface', async () => {
      const { error } = await sdkFinal(gw, { model: 'mock/unavailable', input: 'hi' });
      assert.ok(error instanceof APIError);
      assert.equal(error.status, 503);
      assert.equal(error.code, 'upstream_overloaded');
    });
  });

  it('client.responses.create({stream: true}) yields every event of the wire, in order', async () => {
    const raw = await rawResponses(gw, { model: 'mock/reasoning', input: 'hello there' });
    const stream = await gw.client.responses.create({ model: 'mock/reasoning', input: 'hello there', stream: true });
    const events = [];
    for await (const event of stream) events.push(event);
    assert.deepEqual(
      events.map((e) => [e.type, e.sequence_number]),
      raw.events.map((e) => [e.type, e.sequence_number]),
    );
    const last = events.at(-1);
    assert.equal(last?.type, 'response.completed');
    assert.deepEqual(last.type === 'response.completed' && digest(last.response), digest(raw.terminal.response));
  });

  it('non-streaming: one full response object, equal to the streamed one but for ids; GET /v1/responses/{id} returns it', async () => {
    const body = { model: 'mock/reasoning', input: 'hello there', instructions: 'Echo.', metadata: { run: '1' } };
    const response = await gw.client.responses.create(body);
    const raw = await rawResponses(gw, body);
    const streamed = raw.terminal.response;
    const reqId = response.id.replace(/^resp_/, '');
    assert.equal(response.object, 'response');
    assert.equal(response.status, 'completed');
    assert.equal(response.output_text, 'You said: hello there');
    assert.deepEqual(response.output, [
      {
        type: 'reasoning',
        id: `rs_${reqId}_0`,
        summary: [{ type: 'summary_text', text: 'The user wants their message repeated. I will echo it.' }],
      },
      {
        type: 'message',
        id: `msg_${reqId}_1`,
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'You said: hello there', annotations: [], logprobs: [] }],
      },
    ]);
    const withoutIds = (r: Record<string, any>) => {
      const { id: _, created_at: __, output_text: ___, ...rest } = r;
      return { ...rest, output: r.output.map(({ id: _id, ...item }: Record<string, unknown>) => item) };
    };
    assert.deepEqual(withoutIds(response as unknown as Record<string, any>), withoutIds(streamed));
    assert.deepEqual({ instructions: response.instructions, metadata: response.metadata }, { instructions: 'Echo.', metadata: { run: '1' } });

    assert.deepEqual(await gw.client.responses.retrieve(response.id), response);
    const stored = await fetch(`${gw.url}/v1/responses/${streamed.id}`);
    assert.deepEqual(await stored.json(), streamed);
  });

  it('previous_response_id continues the conversation: the upstream gets the earlier turns as chat messages', async () => {
    const toolCall = expectedFromRecording('openai-chat/gpt4o-mini-tool-call.sse').choices[0].toolCalls[0];
    const tools = [{ type: 'function' as const, name: 'get_capital', parameters: { type: 'object' }, strict: false }];
    upstream.reply({ body: openAIStreamBody('openai-chat/gpt4o-mini-tool-call.sse') });
    const first = await gw.client.responses
      .stream({ model: 'up/gpt-4o-mini', instructions: 'Use tools.', input: 'Capital of the UK?', tools })
      .finalResponse();
    assert.deepEqual(digest(first).calls, [{ call_id: toolCall.id, name: 'get_capital', arguments: toolCall.arguments }]);

    upstream.reply({ body: openAIStreamBody('openai-chat/gpt4o-mini-text-after-tool.sse') });
    const answer = expectedFromRecording('openai-chat/gpt4o-mini-text-after-tool.sse').choices[0].content;
    const second = await gw.client.responses
      .stream({
        model: 'up/gpt-4o-mini',
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: toolCall.id, output: 'London' }],
        tools,
      })
      .finalResponse();
    assert.equal(second.output_text, answer);
    const assistantCall = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: toolCall.id, type: 'function', function: { name: 'get_capital', arguments: toolCall.arguments } }],
    };
    // The instructions belong to the first response only.
    assert.deepEqual((upstream.requests.at(-1)!.json as { messages: unknown }).messages, [
      { role: 'user', content: 'Capital of the UK?' },
      assistantCall,
      { role: 'tool', tool_call_id: toolCall.id, content: 'London' },
    ]);

    upstream.reply({
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'c3',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4o-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: 'You are welcome.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 40, completion_tokens: 4, total_tokens: 44 },
      }),
    });
    const third = await gw.client.responses.create({ model: 'up/gpt-4o-mini', previous_response_id: second.id, input: 'Thanks' });
    assert.equal(third.output_text, 'You are welcome.');
    assert.equal(third.previous_response_id, second.id);
    assert.deepEqual((upstream.requests.at(-1)!.json as { messages: unknown }).messages, [
      { role: 'user', content: 'Capital of the UK?' },
      assistantCall,
      { role: 'tool', tool_call_id: toolCall.id, content: 'London' },
      { role: 'assistant', content: answer },
      { role: 'user', content: 'Thanks' },
    ]);
  });

  it('store: false keeps nothing: GET is a 404, and so is a continuation of it', async () => {
    const response = await gw.client.responses.create({ model: 'mock/echo', input: 'hi', store: false });
    assert.equal((response as { store?: boolean }).store, false);
    await assert.rejects(gw.client.responses.retrieve(response.id), NotFoundError);
    await assert.rejects(
      gw.client.responses.create({ model: 'mock/echo', input: 'again', previous_response_id: response.id }),
      (err: unknown) => err instanceof NotFoundError && err.param === 'previous_response_id',
    );
  });

  it('an unknown previous_response_id is a 404 naming the param', async () => {
    await assert.rejects(
      gw.client.responses.create({ model: 'mock/echo', input: 'hi', previous_response_id: 'resp_nope', stream: true }),
      (err: unknown) =>
        err instanceof NotFoundError &&
        err.param === 'previous_response_id' &&
        err.code === 'previous_response_not_found' &&
        err.message === "404 Previous response with id 'resp_nope' not found.",
    );
  });

  it('a request sluice cannot serve is a 400 naming the field (hosted tools, background)', async () => {
    await assert.rejects(
      gw.client.responses.create({ model: 'up/m', input: 'hi', tools: [{ type: 'web_search' }] }),
      (err: unknown) => err instanceof APIError && err.status === 400 && err.param === 'tools[0].type',
    );
    await assert.rejects(
      gw.client.responses.create({ model: 'up/m', input: 'hi', background: true }),
      (err: unknown) => err instanceof APIError && err.status === 400 && err.param === 'background',
    );
    assert.equal(upstream.requests.filter((r) => r.url.endsWith('/responses')).length, 0);
  });

  it('an upstream HTTP error before the stream is the same HTTP error', async () => {
    upstream.reply({
      status: 429,
      headers: { 'content-type': 'application/json', 'retry-after': '7' },
      body: JSON.stringify({ error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }),
    });
    const { error } = await sdkFinal(gw, { model: 'up/m', input: 'hi' });
    assert.ok(error instanceof APIError);
    assert.equal(error.status, 429);
    assert.match(error.message, /Rate limit reached/);
  });

  it('usage lands in the ledger record of the request', async () => {
    upstream.reply({ body: openAIStreamBody('openai-chat/gpt4o-parallel-tool-calls.sse') });
    const raw = await rawResponses(gw, { model: 'up/gpt-4o', input: 'hi' });
    const record = await requestRecord(gw, raw.headers.get('x-request-id')!);
    assert.deepEqual(
      { surface: record.surface, streamed: record.streamed, outcome: record.outcome, finish: record.finish_reason, usage: record.usage },
      {
        surface: 'responses',
        streamed: true,
        outcome: 'ok',
        finish: 'tool_calls',
        usage: {
          input_tokens: 364,
          cached_input_tokens: 0,
          cache_write_tokens: 0,
          output_tokens: 40,
          reasoning_tokens: 0,
          // The recording's audio and Predicted Outputs details, all 0, are kept.
          audio_input_tokens: 0,
          audio_output_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
          estimated: false,
        },
      },
    );
    assert.equal(raw.terminal.response.usage?.total_tokens, 404);
  });

  it('the client going away aborts the upstream request', async () => {
    upstream.reply({ pieces: [chunk({ role: 'assistant', content: 'Hel' })], after: 'hang' });
    const closed = upstream.closedEarly;
    const stream = await gw.client.responses.create({ model: 'up/m', input: 'hi', stream: true });
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') break;
    }
    await upstream.waitForEarlyClose(2000, closed + 1);
  });
});

describe('/v1/responses timings', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: { ...upstreamConfig(url), responses: { deadline_s: 0.5 }, stream: { heartbeat_s: 0.05 } },
  }));

  it('the request deadline ends a started stream with response.failed code request_timeout, then [DONE]', async () => {
    upstream.reply({ pieces: [chunk({ role: 'assistant', content: 'Slow' })], after: 'hang' });
    const closed = upstream.closedEarly;
    const raw = await rawResponses(gw, { model: 'up/m', input: 'hi' });
    const message = 'Request exceeded the deadline of 0.5s.';
    assert.deepEqual(raw.terminal.response.error, { code: 'request_timeout', message });
    assert.deepEqual(raw.events.at(-2), {
      type: 'error',
      sequence_number: raw.events.length - 2,
      error: { type: 'timeout_error', code: 'request_timeout', message, param: null },
    });
    assert.equal(digest(raw.terminal.response).text, 'Slow');
    await upstream.waitForEarlyClose(2000, closed + 1);
  });

  it('the deadline with nothing sent but heartbeats still ends in response.failed (the headers are out)', async () => {
    upstream.reply({ body: '', after: 'hang' });
    const raw = await rawResponses(gw, { model: 'up/m', input: 'hi' });
    assert.ok(raw.comments.length > 0);
    assert.deepEqual(
      raw.events.map((e) => e.type),
      ['response.created', 'response.in_progress', 'error', 'response.failed'],
    );
    assert.equal(raw.terminal.response.error?.code, 'request_timeout');
  });

  it('heartbeat comments while the upstream is quiet, the stream still valid', async () => {
    const body = chunk({ role: 'assistant', content: 'Hi' }) + chunk({}, 'stop');
    const [head, tail] = [body.slice(0, body.indexOf('\n\n') + 2), body.slice(body.indexOf('\n\n') + 2)];
    upstream.reply({ pieces: [head, tail], delaysMs: [0, 200] });
    const raw = await rawResponses(gw, { model: 'up/m', input: 'hi' });
    assert.ok(raw.comments.length > 0 && raw.comments.every((c) => c === 'heartbeat'));
    assert.equal(digest(raw.terminal.response).text, 'Hi');
  });
});

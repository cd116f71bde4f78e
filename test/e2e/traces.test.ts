import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { chatStream, chunk, choice, DONE, ev, finish, responsesBody, role, text, usage } from '../helpers/check-streams.ts';
import { embeddingFixture } from '../helpers/embedding-fixtures.ts';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { rawStream, startGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * OpenTelemetry traces (docs/operations/observability.md "Traces (OpenTelemetry)"): a gateway exporting to a local OTLP/HTTP
 * collector stub (JSON bodies), a fake OpenAI-compatible upstream, and a route whose first target
 * refuses with 503. The spans are read once the gateway shut down (its provider flushes then).
 */

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values: OtlpValue[] };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: OtlpValue }[];
  status?: { code?: number };
}

/** Span attributes as plain values (OTLP JSON wraps each in a typed value). */
function attrs(span: OtlpSpan): Record<string, unknown> {
  const plain = (v: OtlpValue): unknown =>
    v.arrayValue ? v.arrayValue.values.map(plain) : (v.stringValue ?? v.boolValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.doubleValue));
  return Object.fromEntries(span.attributes.map((a) => [a.key, plain(a.value)]));
}

async function startCollector(): Promise<{ url: string; spans: OtlpSpan[]; server: Server }> {
  const spans: OtlpSpan[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method === 'POST' && req.url === '/v1/traces') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...ss.spans);
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, server };
}

const PROMPT = 'the secret prompt text 7f3a';
const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';

describe('traces: OTLP export with GenAI attributes', () => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let up: FakeUpstream;
  let down: FakeUpstream;
  let gw: TestGateway;
  let spans: OtlpSpan[];

  before(async () => {
    collector = await startCollector();
    up = await startFakeUpstream();
    down = await startFakeUpstream();
    up.reply({ body: chatStream().join('') });
    down.reply({ status: 503, headers: { 'content-type': 'application/json' }, body: '{"error":{"message":"busy"}}' });
    gw = await startGateway(
      {
        providers: {
          up: { base_url: `${up.url}/v1`, api_key: 'sk-up' },
          down: { base_url: `${down.url}/v1`, api_key: 'sk-down' },
        },
        routes: { chain: { targets: [{ model: 'down/m-1' }, { model: 'up/m-1' }] } },
      },
      { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'sluice-test' },
    );
    const res = await rawStream(
      gw.url,
      { model: 'chain', stream: true, messages: [{ role: 'user', content: PROMPT }] },
      { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`, authorization: 'Bearer unused' },
    );
    assert.equal(res.status, 200);
    const plain = await rawStream(gw.url, { model: 'up/m-2', stream: true, messages: [{ role: 'user', content: PROMPT }] });
    assert.equal(plain.status, 200);
    await gw.close();
    spans = collector.spans;
  });

  after(async () => {
    await up.close();
    await down.close();
    await new Promise((r) => collector.server.close(r));
  });

  it('makes the request span a child of the client traceparent, with one span per attempt under it', () => {
    const request = spans.find((s) => s.traceId === CLIENT_TRACE && s.parentSpanId === CLIENT_SPAN);
    assert.ok(request, `no span under the client's traceparent in ${JSON.stringify(spans.map((s) => s.name))}`);
    assert.equal(request.name, 'chat chain');
    assert.equal(request.kind, 2, 'SERVER');
    const attempts = spans.filter((s) => s.parentSpanId === request.spanId);
    assert.deepEqual(
      attempts.map((s) => [s.name, s.kind, attrs(s)['gen_ai.provider.name'], attrs(s)['sluice.attempt']]),
      [
        ['chat m-1', 3, 'down', 1],
        ['chat m-1', 3, 'up', 2],
      ],
    );
    assert.ok(attempts.every((s) => s.traceId === CLIENT_TRACE));
  });

  it('puts the GenAI attributes on the request span', () => {
    const request = spans.find((s) => s.parentSpanId === CLIENT_SPAN) as OtlpSpan;
    const a = attrs(request);
    assert.equal(a['gen_ai.operation.name'], 'chat');
    assert.equal(a['gen_ai.provider.name'], 'up');
    assert.equal(a['gen_ai.request.model'], 'chain');
    assert.equal(a['gen_ai.response.model'], 'm-1');
    assert.equal(a['gen_ai.usage.input_tokens'], 3);
    assert.equal(a['gen_ai.usage.output_tokens'], 2);
    assert.deepEqual(a['gen_ai.response.finish_reasons'], ['stop']);
    assert.equal(typeof a['gen_ai.response.time_to_first_chunk'], 'number');
    assert.equal(a['error.type'], undefined);
    assert.match(String(a['sluice.request_id']), /.+/);
  });

  it('marks the refused attempt with error.type and its status, the answering one with its usage', () => {
    const request = spans.find((s) => s.parentSpanId === CLIENT_SPAN) as OtlpSpan;
    const [refused, answered] = spans.filter((s) => s.parentSpanId === request.spanId).map(attrs);
    assert.equal(refused['error.type'], 'upstream_overloaded');
    assert.equal(refused['http.response.status_code'], 503);
    assert.equal(refused['gen_ai.request.model'], 'm-1');
    assert.equal(answered['error.type'], undefined);
    assert.equal(answered['gen_ai.usage.output_tokens'], 2);
    assert.deepEqual(answered['gen_ai.response.finish_reasons'], ['stop']);
    assert.equal(typeof answered['gen_ai.response.time_to_first_chunk'], 'number');
  });

  it('sends each upstream request the traceparent of its attempt span', () => {
    const request = spans.find((s) => s.parentSpanId === CLIENT_SPAN) as OtlpSpan;
    const [refused, answered] = spans.filter((s) => s.parentSpanId === request.spanId);
    assert.equal(down.requests[0].headers.traceparent, `00-${CLIENT_TRACE}-${refused.spanId}-01`);
    assert.equal(up.requests[0].headers.traceparent, `00-${CLIENT_TRACE}-${answered.spanId}-01`);
  });

  it('starts a new trace for a request without traceparent', () => {
    const roots = spans.filter((s) => !s.parentSpanId);
    assert.equal(roots.length, 1);
    assert.equal(roots[0].name, 'chat up/m-2');
    assert.notEqual(roots[0].traceId, CLIENT_TRACE);
    const [attempt] = spans.filter((s) => s.parentSpanId === roots[0].spanId);
    assert.equal(up.requests[1].headers.traceparent, `00-${roots[0].traceId}-${attempt.spanId}-01`);
  });

  it('records no prompt or completion text', () => {
    const text = JSON.stringify(spans);
    assert.ok(!text.includes(PROMPT), 'the prompt is in a span');
    assert.ok(!text.includes('Hello'), 'the completion is in a span');
    assert.ok(!/gen_ai\.(input|output)\.messages|gen_ai\.system_instructions/.test(text), 'a content attribute is set');
  });
});

describe('traces: embeddings, and a request refused at the door', () => {
  it('names the operation embeddings, and gives the refused request error.type', async () => {
    const collector = await startCollector();
    const up = await startFakeUpstream();
    up.reply({
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(embeddingFixture('openai/text-embedding-3-large-two.json')),
    });
    const gw = await startGateway(
      { auth: { master_key: 'sk-master' }, providers: { up: { base_url: `${up.url}/v1`, api_key: 'sk-up' } } },
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces` },
    );
    try {
      const post = (path: string, key: string, body: unknown) =>
        fetch(`${gw.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify(body),
        });
      const embedded = await post('/v1/embeddings', 'sk-master', { model: 'up/text-embedding-3-large', input: [PROMPT, 'two'] });
      assert.equal(embedded.status, 200, await embedded.text());
      const refused = await post('/v1/chat/completions', 'sk-wrong', { model: 'up/m', messages: [{ role: 'user', content: PROMPT }] });
      assert.equal(refused.status, 401);
      await refused.text();
    } finally {
      await gw.close();
      await up.close();
      await new Promise((r) => collector.server.close(r));
    }
    const roots = collector.spans.filter((s) => !s.parentSpanId);
    const embeddings = roots.find((s) => s.name === 'embeddings up/text-embedding-3-large') as OtlpSpan;
    assert.ok(embeddings, `no embeddings span in ${JSON.stringify(roots.map((s) => s.name))}`);
    assert.equal(attrs(embeddings)['gen_ai.operation.name'], 'embeddings');
    assert.equal(attrs(embeddings)['gen_ai.response.time_to_first_chunk'], undefined);
    const [attempt] = collector.spans.filter((s) => s.parentSpanId === embeddings.spanId);
    assert.equal(up.requests[0].headers.traceparent, `00-${embeddings.traceId}-${attempt.spanId}-01`);
    const door = roots.find((s) => attrs(s)['error.type'] === 'invalid_api_key');
    assert.ok(door, 'no span for the refused request');
    assert.equal(door.status?.code, 2, 'ERROR');
    assert.ok(!JSON.stringify(collector.spans).includes(PROMPT));
  });
});

describe('traces: off by default', () => {
  it('sends no traceparent upstream when no OTLP endpoint is set', async () => {
    const up = await startFakeUpstream();
    up.reply({ body: chatStream().join('') });
    const gw = await startGateway({ providers: { up: { base_url: `${up.url}/v1`, api_key: 'sk-up' } } });
    try {
      assert.equal(gw.gateway.context.tracing, undefined);
      const res = await rawStream(gw.url, { model: 'up/m', stream: true, messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(res.status, 200);
      assert.equal(up.requests[0].headers.traceparent, undefined);
    } finally {
      await gw.close();
      await up.close();
    }
  });
});

/** The content attributes of the root span whose input holds `marker`, parsed. */
function contentOf(spans: OtlpSpan[], marker: string) {
  const span = spans.find((s) => !s.parentSpanId && String(attrs(s)['gen_ai.input.messages'] ?? '').includes(marker));
  assert.ok(span, `no request span with ${marker} in its input`);
  const a = attrs(span);
  const parse = (name: string) => (a[name] === undefined ? undefined : JSON.parse(String(a[name])));
  return {
    input: parse('gen_ai.input.messages'),
    output: parse('gen_ai.output.messages'),
    system: parse('gen_ai.system_instructions'),
    truncated: a['sluice.content_truncated'],
  };
}

const HELLO = [{ role: 'assistant', parts: [{ type: 'text', content: 'Hello' }], finish_reason: 'stop' }];

describe('traces: traces.capture_content records prompts and completions (GenAI conventions)', () => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let up: FakeUpstream;
  let relay: FakeUpstream;
  let spans: OtlpSpan[];

  const toolStream = [
    role(),
    chunk([choice({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] })]),
    chunk([choice({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] })]),
    chunk([choice({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] })]),
    finish('tool_calls'),
    usage(),
    DONE,
  ].join('');
  const completion = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  };
  const relayedOutput = [
    { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hi', annotations: [] }] },
    { type: 'function_call', id: 'fc_1', call_id: 'call_9', name: 'lookup', arguments: '{"q":"x"}', status: 'completed' },
  ];
  const relayedResponse = {
    id: 'resp_1',
    object: 'response',
    status: 'completed',
    output: relayedOutput,
    usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
  };

  before(async () => {
    collector = await startCollector();
    up = await startFakeUpstream();
    relay = await startFakeUpstream();
    up.reply((req) => {
      const body = req.json as { model: string; stream?: boolean };
      if (!body.stream) return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(completion) };
      return { body: body.model === 'tool' ? toolStream : [role(), text('Hel'), text('lo'), finish(), usage(), DONE].join('') };
    });
    relay.reply((req) => {
      if (!(req.json as { stream?: boolean }).stream) {
        return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(relayedResponse) };
      }
      const where = { item_id: 'msg_1', output_index: 0, content_index: 0 };
      const call = { item_id: 'fc_1', output_index: 1 };
      const events = [
        ev('response.created', { response: { ...relayedResponse, status: 'in_progress', output: [], usage: null } }),
        ev('response.output_item.added', { output_index: 0, item: { ...relayedOutput[0], status: 'in_progress', content: [] } }),
        ev('response.content_part.added', { ...where, part: { type: 'output_text', text: '', annotations: [] } }),
        ev('response.output_text.delta', { ...where, delta: 'Hi' }),
        ev('response.output_text.done', { ...where, text: 'Hi' }),
        ev('response.content_part.done', { ...where, part: relayedOutput[0].content?.[0] }),
        ev('response.output_item.done', { output_index: 0, item: relayedOutput[0] }),
        ev('response.output_item.added', { output_index: 1, item: { ...relayedOutput[1], status: 'in_progress', arguments: '' } }),
        ev('response.function_call_arguments.delta', { ...call, delta: '{"q":"x"}' }),
        ev('response.function_call_arguments.done', { ...call, arguments: '{"q":"x"}' }),
        ev('response.output_item.done', { output_index: 1, item: relayedOutput[1] }),
        ev('response.completed', { response: relayedResponse }),
      ];
      return { body: responsesBody(events) };
    });
    const gw = await startGateway(
      {
        providers: {
          up: { base_url: `${up.url}/v1`, api_key: 'sk-up' },
          relay: { base_url: `${relay.url}/v1`, api_key: 'sk-relay', responses_api: true },
        },
        traces: { capture_content: true },
      },
      { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url },
    );
    try {
      const post = async (path: string, body: unknown) => {
        const res = await rawStream(gw.url, body, {}, path);
        assert.equal(res.status, 200, res.text);
      };
      const chat = (marker: string, model = 'up/m', stream = true) =>
        post('/v1/chat/completions', {
          model,
          stream,
          messages: [
            { role: 'system', content: 'Answer briefly.' },
            { role: 'user', content: `${PROMPT} ${marker}` },
          ],
        });
      await chat('chat-streamed');
      await chat('chat-unstreamed', 'up/m', false);
      await chat('chat-tool', 'up/tool');
      await post('/v1/messages', {
        model: 'up/m',
        max_tokens: 100,
        stream: true,
        system: 'Be kind.',
        messages: [{ role: 'user', content: `${PROMPT} messages-streamed` }],
      });
      await post('/v1/responses', { model: 'up/m', instructions: 'Be terse.', input: `${PROMPT} responses-unstreamed` });
      await post('/v1/responses', { model: 'relay/r', stream: true, input: `${PROMPT} relayed-streamed` });
      await post('/v1/responses', {
        model: 'relay/r',
        input: [{ role: 'user', content: [{ type: 'input_text', text: `${PROMPT} relayed-unstreamed` }] }],
      });
    } finally {
      await gw.close();
    }
    spans = collector.spans;
  });

  after(async () => {
    await up.close();
    await relay.close();
    await new Promise((r) => collector.server.close(r));
  });

  it('records a chat conversation (its system message included) and the streamed answer', () => {
    const { input, output, system } = contentOf(spans, 'chat-streamed');
    assert.deepEqual(input, [
      { role: 'system', parts: [{ type: 'text', content: 'Answer briefly.' }] },
      { role: 'user', parts: [{ type: 'text', content: `${PROMPT} chat-streamed` }] },
    ]);
    assert.equal(system, undefined, 'a chat system message is part of the history');
    assert.deepEqual(output, HELLO);
  });

  it('records the answer of a request that was not streamed', () => {
    assert.deepEqual(contentOf(spans, 'chat-unstreamed').output, HELLO);
  });

  it('records tool calls with their arguments, joined from the stream', () => {
    assert.deepEqual(contentOf(spans, 'chat-tool').output, [
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
        finish_reason: 'tool_call',
      },
    ]);
  });

  it('records Messages `system` and Responses `instructions` as gen_ai.system_instructions', () => {
    const messages = contentOf(spans, 'messages-streamed');
    assert.deepEqual(messages.system, [{ type: 'text', content: 'Be kind.' }]);
    assert.deepEqual(messages.input, [{ role: 'user', parts: [{ type: 'text', content: `${PROMPT} messages-streamed` }] }]);
    assert.deepEqual(messages.output, HELLO);
    const responses = contentOf(spans, 'responses-unstreamed');
    assert.deepEqual(responses.system, [{ type: 'text', content: 'Be terse.' }]);
    assert.deepEqual(responses.input, [{ role: 'user', parts: [{ type: 'text', content: `${PROMPT} responses-unstreamed` }] }]);
    assert.deepEqual(responses.output, HELLO);
  });

  it('records a relayed Responses call from its body and its output items, streamed or not', () => {
    const parts = [
      { type: 'text', content: 'Hi' },
      { type: 'tool_call', id: 'call_9', name: 'lookup', arguments: { q: 'x' } },
    ];
    const streamed = contentOf(spans, 'relayed-streamed');
    assert.deepEqual(streamed.input, [{ role: 'user', parts: [{ type: 'text', content: `${PROMPT} relayed-streamed` }] }]);
    assert.deepEqual(streamed.output, [{ role: 'assistant', parts, finish_reason: 'tool_call' }]);
    const unstreamed = contentOf(spans, 'relayed-unstreamed');
    assert.deepEqual(unstreamed.input, [{ role: 'user', parts: [{ type: 'text', content: `${PROMPT} relayed-unstreamed` }] }]);
    // Whole, the response's status and items give the finish its stream's terminal event gives.
    assert.deepEqual(unstreamed.output, [{ role: 'assistant', parts, finish_reason: 'tool_call' }]);
  });

  it('puts content on the request span only, never on an attempt span', () => {
    const attempts = spans.filter((s) => s.parentSpanId);
    assert.ok(attempts.length >= 7);
    assert.ok(!JSON.stringify(attempts).includes(PROMPT));
  });
});

describe('traces: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, and the size bound', () => {
  it('captures with the variable alone, and cuts each attribute to content_max_chars as JSON that parses', async () => {
    const collector = await startCollector();
    const up = await startFakeUpstream();
    up.reply({ body: chatStream().join('') });
    const gw = await startGateway(
      { providers: { up: { base_url: `${up.url}/v1`, api_key: 'sk-up' } }, traces: { content_max_chars: 300 } },
      { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' },
    );
    const huge = `bounded ${'x"'.repeat(50_000)}`;
    try {
      const res = await rawStream(gw.url, {
        model: 'up/m',
        stream: true,
        messages: [
          { role: 'user', content: huge },
          { role: 'user', content: 'never reached' },
        ],
      });
      assert.equal(res.status, 200);
    } finally {
      await gw.close();
      await up.close();
      await new Promise((r) => collector.server.close(r));
    }
    const request = collector.spans.find((s) => !s.parentSpanId) as OtlpSpan;
    const raw = String(attrs(request)['gen_ai.input.messages']);
    assert.ok(raw.length <= 300, `${raw.length} characters`);
    const input = JSON.parse(raw);
    assert.equal(input.length, 1, 'the messages after the cut one are left out');
    assert.ok(huge.startsWith(input[0].parts[0].content));
    assert.ok(input[0].parts[0].content.length > 100);
    assert.equal(attrs(request)['sluice.content_truncated'], true);
    assert.deepEqual(JSON.parse(String(attrs(request)['gen_ai.output.messages'])), HELLO);
  });
});

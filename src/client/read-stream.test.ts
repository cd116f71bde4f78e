import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readStream, readStreamText } from './read-stream.ts';
import { SluiceProtocolError, SluiceStreamError } from './errors.ts';

const data = (json: unknown, id?: string) => `${id ? `id: ${id}\n` : ''}data: ${JSON.stringify(json)}\n\n`;
const named = (event: string, json: unknown) => `event: ${event}\ndata: ${JSON.stringify(json)}\n\n`;
const DONE = 'data: [DONE]\n\n';
const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  model: 'mock/echo',
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
});

const sse = (body: string | string[], init: ResponseInit = {}) =>
  new Response(Array.isArray(body) ? body.join('') : body, { headers: { 'content-type': 'text/event-stream' }, ...init });

describe('sluice/client readStream: chat completions', () => {
  it('skips comments and heartbeats, tolerates id lines, joins tool calls by index, reads usage with its cost', async () => {
    const texts: string[] = [];
    const message = await readStream(
      sse([
        ': heartbeat\n\n',
        data(chunk({ role: 'assistant', content: '' }), 'req-1:0'),
        data(chunk({ reasoning_content: 'Thinking', reasoning_signature: 'sig-1' }), 'req-1:1'),
        data(chunk({ content: 'Hel' }), 'req-1:2'),
        ': keep-alive\n\n',
        data(chunk({ content: 'lo' }), 'req-1:3'),
        data(chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'b', arguments: '' } }] })),
        data(chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'a', arguments: '{"x"' } }] })),
        data(chunk({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] })),
        data(chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] })),
        data(chunk({}, 'tool_calls')),
        data({
          ...chunk({}),
          choices: [],
          usage: { prompt_tokens: 4, completion_tokens: 6, total_tokens: 10, cost_usd: 0.0012, estimated: false },
        }),
        DONE,
      ]),
      { onText: (t) => texts.push(t) },
    );
    assert.deepEqual(texts, ['Hel', 'lo']);
    assert.equal(message.surface, 'chat');
    assert.equal(message.text, 'Hello');
    assert.equal(message.reasoning, 'Thinking');
    assert.equal(message.reasoningSignature, 'sig-1');
    assert.deepEqual(message.toolCalls, [
      { index: 1, id: 'call_b', name: 'b', arguments: '{}' },
      { index: 0, id: 'call_a', name: 'a', arguments: '{"x":1}' },
    ]);
    assert.equal(message.finishReason, 'tool_calls');
    assert.deepEqual(message.usage, { inputTokens: 4, outputTokens: 6, estimated: false });
    assert.equal(message.costUsd, 0.0012);
  });

  it('raises a data-only error frame as a SluiceStreamError with the upstream detail', () => {
    const body = [
      data(chunk({ content: 'Hi' })),
      data({
        error: {
          message: 'Provider returned 502',
          type: 'server_error',
          code: 'upstream_error',
          upstream: { status: 502, type: null, code: null },
        },
      }),
      DONE,
    ];
    assert.throws(
      () => readStreamText(body.join('')),
      (err: unknown) =>
        err instanceof SluiceStreamError &&
        err.message === 'Provider returned 502' &&
        err.code === 'upstream_error' &&
        err.type === 'server_error' &&
        err.upstream?.status === 502 &&
        err.event === undefined,
    );
  });

  it('raises a named error frame the same way', () => {
    const body = named('error', { error: { message: 'Overloaded', type: 'server_error', code: 'upstream_overloaded' } });
    assert.throws(
      () => readStreamText(body),
      (err: unknown) => err instanceof SluiceStreamError && err.code === 'upstream_overloaded' && err.event === 'error',
    );
  });

  it('passes accounting and vendor events to their callbacks and takes usage_final as the usage', () => {
    const accounting: string[] = [];
    const vendor: unknown[] = [];
    const message = readStreamText(
      [
        named('usage_start', { type: 'usage_start', request_id: 'r', provider: 'mock', model: 'echo', input_tokens: 3 }),
        data({ type: 'x_research.step', step: 1 }),
        data({ type: 'content', data: 'Hi', provider: 'mock', choices: [{ delta: { content: 'Hi' }, index: 0, finish_reason: null }] }),
        data({ type: 'finish', provider: 'mock', finish_reason: 'stop', choices: [{ delta: {}, index: 0, finish_reason: 'stop' }] }),
        named('usage_final', {
          type: 'usage_final',
          request_id: 'r',
          provider: 'mock',
          model: 'echo',
          input_tokens: 3,
          output_tokens: 1,
          cost_usd: 0.5,
          latency_ms: 4,
          estimated: true,
        }),
        data({ type: 'response.done', response: { id: 'r', object: 'response', status: 'completed' } }),
        DONE,
      ].join(''),
      { onAccountingEvent: (e) => accounting.push(String(e.type)), onVendorEvent: (e) => vendor.push(e) },
    );
    assert.deepEqual(accounting, ['usage_start', 'usage_final', 'response.done']);
    assert.deepEqual(vendor, [{ type: 'x_research.step', step: 1 }]);
    assert.equal(message.text, 'Hi');
    assert.equal(message.finishReason, 'stop');
    assert.deepEqual(message.usage, { inputTokens: 3, outputTokens: 1, estimated: true });
    assert.equal(message.costUsd, 0.5);
  });

  it("raises the accounting profile's flat error frame with its message and code", () => {
    const body = data({ type: 'error', data: 'Provider returned 502 Bad Gateway', provider: 'openai', code: 'upstream_error' });
    assert.throws(
      () => readStreamText(body),
      (err: unknown) => err instanceof SluiceStreamError && err.message === 'Provider returned 502 Bad Gateway' && err.code === 'upstream_error',
    );
  });

  it('ends at [DONE] without reading further, and refuses a stream cut before its end', () => {
    assert.equal(readStreamText(data(chunk({ content: 'a' })) + DONE + 'data: not json\n\n').text, 'a');
    assert.throws(() => readStreamText(data(chunk({ content: 'a' }))), SluiceProtocolError);
    assert.throws(() => readStreamText('data: {oops\n\n'), SluiceProtocolError);
  });

  it('raises an HTTP error answer as a SluiceStreamError, and refuses a body that is not an event stream', async () => {
    const refused = new Response(JSON.stringify({ error: { message: 'bad key', type: 'invalid_request_error', code: 'invalid_api_key' } }), {
      status: 401,
      headers: { 'content-type': 'application/json' },
    });
    await assert.rejects(readStream(refused), (err: unknown) => err instanceof SluiceStreamError && err.code === 'invalid_api_key');
    await assert.rejects(readStream(new Response('{}', { headers: { 'content-type': 'application/json' } })), SluiceProtocolError);
  });
});

describe('sluice/client readStream: Responses', () => {
  const ev = (type: string, fields: Record<string, unknown>, seq: number) => named(type, { type, sequence_number: seq, ...fields });
  it('accumulates text, reasoning with encrypted content, a function call and the usage', () => {
    const response = (status: string, usage: unknown = null) => ({ id: 'resp_1', object: 'response', model: 'm', status, usage });
    const message = readStreamText(
      [
        ev('response.created', { response: response('in_progress') }, 0),
        ev('response.output_item.added', { output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [] } }, 1),
        ev('response.reasoning_summary_text.delta', { output_index: 0, delta: 'Let me see' }, 2),
        ev('response.output_item.done', { output_index: 0, item: { type: 'reasoning', id: 'rs_1', encrypted_content: 'enc' } }, 3),
        ev('response.output_text.delta', { output_index: 1, delta: 'Calling.' }, 4),
        ev('response.output_item.added', { output_index: 2, item: { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '' } }, 5),
        ev('response.function_call_arguments.delta', { output_index: 2, delta: '{"a":' }, 6),
        ev('response.function_call_arguments.delta', { output_index: 2, delta: '1}' }, 7),
        ev(
          'response.completed',
          { response: response('completed', { input_tokens: 5, output_tokens: 7, output_tokens_details: { reasoning_tokens: 2 } }) },
          8,
        ),
        DONE,
      ].join(''),
    );
    assert.equal(message.surface, 'responses');
    assert.equal(message.id, 'resp_1');
    assert.equal(message.text, 'Calling.');
    assert.equal(message.reasoning, 'Let me see');
    assert.equal(message.reasoningSignature, 'enc');
    assert.deepEqual(message.toolCalls, [{ index: 2, id: 'call_1', name: 'f', arguments: '{"a":1}' }]);
    assert.equal(message.finishReason, 'completed');
    assert.deepEqual(message.usage, { inputTokens: 5, outputTokens: 7, reasoningTokens: 2 });
  });

  it("raises the error event with the upstream's code", () => {
    const body = ev('error', { error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' } }, 3);
    assert.throws(
      () => readStreamText(body),
      (err: unknown) => err instanceof SluiceStreamError && err.code === 'insufficient_quota' && err.message.startsWith('You exceeded'),
    );
  });
});

describe('sluice/client readStream: Anthropic Messages', () => {
  const ev = (fields: Record<string, unknown>) => named(String(fields.type), fields);
  it('accumulates thinking with its signature, text, a tool_use input and the merged usage; ends at message_stop', () => {
    const message = readStreamText(
      [
        ev({
          type: 'message_start',
          message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 9, output_tokens: 1, cache_read_input_tokens: 4 } },
        }),
        ev({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
        ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm' } }),
        ev({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } }),
        ev({ type: 'content_block_stop', index: 0 }),
        ev({ type: 'ping' }),
        ev({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }),
        ev({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Sure.' } }),
        ev({ type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get', input: {} } }),
        ev({ type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"q":' } }),
        ev({ type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '"x"}' } }),
        ev({ type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 12 } }),
        ev({ type: 'message_stop' }),
      ].join(''),
    );
    assert.equal(message.surface, 'messages');
    assert.equal(message.reasoning, 'Hmm');
    assert.equal(message.reasoningSignature, 'sig');
    assert.equal(message.text, 'Sure.');
    assert.deepEqual(message.toolCalls, [{ index: 0, id: 'toolu_1', name: 'get', arguments: '{"q":"x"}' }]);
    assert.equal(message.finishReason, 'tool_use');
    assert.deepEqual(message.usage, { inputTokens: 9, outputTokens: 12, cachedInputTokens: 4 });
  });

  it("raises Anthropic's error event with its type", () => {
    const body = ev({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    assert.throws(
      () => readStreamText(body),
      (err: unknown) => err instanceof SluiceStreamError && err.type === 'overloaded_error' && err.message === 'Overloaded',
    );
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkResponsesStream } from '../../../test/helpers/responses-grammar.ts';
import { errors } from '../../errors/catalog.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import type { Usage } from '../../protocol/canonical/usage.ts';
import { ResponsesEventEncoder } from './encode-stream.ts';
import type { ResponsesRequest } from './request-schema.ts';

const request: ResponsesRequest = { model: 'up/m', input: 'hi' };
const identity = { id: 'resp_r1', createdAt: 1700000000, model: 'up/m', request };
const usage: Usage = { inputTokens: 12, outputTokens: 7, cachedInputTokens: 4, reasoningTokens: 3, source: 'provider' };
const wireUsage = {
  input_tokens: 12,
  input_tokens_details: { cached_tokens: 4 },
  output_tokens: 7,
  output_tokens_details: { reasoning_tokens: 3 },
  total_tokens: 19,
};

/** The whole `response` object sluice sends for this request, spelled out. */
function response(status: string, output: unknown[], extra: Record<string, unknown> = {}) {
  return {
    id: 'resp_r1',
    object: 'response',
    created_at: 1700000000,
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: 'up/m',
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: null,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: 'auto',
    tools: [],
    top_p: null,
    top_logprobs: null,
    max_tool_calls: null,
    truncation: 'disabled',
    background: false,
    prompt_cache_key: null,
    safety_identifier: null,
    usage: status === 'in_progress' ? null : wireUsage,
    user: null,
    metadata: {},
    ...extra,
  };
}

const opening = [
  { type: 'response.created', sequence_number: 0, response: response('in_progress', []) },
  { type: 'response.in_progress', sequence_number: 1, response: response('in_progress', []) },
];

const text = (t: string): CanonicalEvent => ({ type: 'text', choice: 0, text: t });
const think = (t: string, signature?: string): CanonicalEvent => ({ type: 'reasoning', choice: 0, text: t, ...(signature && { signature }) });
const call = (index: number, id: string, name: string): CanonicalEvent => ({ type: 'tool-call-start', choice: 0, index, id, name });
const args = (index: number, a: string): CanonicalEvent => ({ type: 'tool-call-delta', choice: 0, index, arguments: a });
const finish = (reason: 'stop' | 'length' | 'tool_calls' | 'content_filter'): CanonicalEvent => ({ type: 'finish', choice: 0, reason });

/**
 * Encodes a canonical stream and ends it as the surface does (closing, or failure), checks the
 * wire against the grammar, and gives back every event parsed.
 */
function encode(events: CanonicalEvent[], end: { error: GatewayError } | null = null, asked = request): Record<string, unknown>[] {
  const encoder = new ResponsesEventEncoder({ ...identity, request: asked });
  let wire = events.map((e) => encoder.encode(e)).join('');
  wire += end ? encoder.failure(end.error, usage) : encoder.closing(usage);
  const { events: parsed } = checkResponsesStream(`${wire}data: [DONE]\n\n`);
  return parsed as unknown as Record<string, unknown>[];
}

const messageItem = (id: string, status: string, content: unknown[]) => ({ type: 'message', id, status, role: 'assistant', content });
const textPart = (t: string) => ({ type: 'output_text', text: t, annotations: [], logprobs: [] });

describe('ResponsesEventEncoder', () => {
  it('text: one message item with one output_text part, then response.completed', () => {
    const where = { item_id: 'msg_r1_0', output_index: 0, content_index: 0 };
    const item = messageItem('msg_r1_0', 'completed', [textPart('Hello')]);
    assert.deepEqual(encode([{ type: 'start' }, text('Hel'), text(''), text('lo'), finish('stop'), { type: 'usage', usage }]), [
      ...opening,
      { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: messageItem('msg_r1_0', 'in_progress', []) },
      { type: 'response.content_part.added', sequence_number: 3, ...where, part: textPart('') },
      { type: 'response.output_text.delta', sequence_number: 4, ...where, delta: 'Hel', logprobs: [] },
      { type: 'response.output_text.delta', sequence_number: 5, ...where, delta: 'lo', logprobs: [] },
      { type: 'response.output_text.done', sequence_number: 6, ...where, text: 'Hello', logprobs: [] },
      { type: 'response.content_part.done', sequence_number: 7, ...where, part: textPart('Hello') },
      { type: 'response.output_item.done', sequence_number: 8, output_index: 0, item },
      { type: 'response.completed', sequence_number: 9, response: response('completed', [item]) },
    ]);
  });

  it('reasoning then text: a reasoning item with a summary part (the signature as encrypted_content), then the message', () => {
    const rs = { item_id: 'rs_r1_0', output_index: 0, summary_index: 0 };
    const msg = { item_id: 'msg_r1_1', output_index: 1, content_index: 0 };
    const reasoning = {
      type: 'reasoning',
      id: 'rs_r1_0',
      summary: [{ type: 'summary_text', text: 'Think.' }],
      encrypted_content: 'sig-1',
    };
    const message = messageItem('msg_r1_1', 'completed', [textPart('Hi')]);
    assert.deepEqual(encode([think('Thi'), think('nk.'), think('', 'sig-1'), text('Hi'), finish('stop')]), [
      ...opening,
      { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: { type: 'reasoning', id: 'rs_r1_0', summary: [] } },
      { type: 'response.reasoning_summary_part.added', sequence_number: 3, ...rs, part: { type: 'summary_text', text: '' } },
      { type: 'response.reasoning_summary_text.delta', sequence_number: 4, ...rs, delta: 'Thi' },
      { type: 'response.reasoning_summary_text.delta', sequence_number: 5, ...rs, delta: 'nk.' },
      { type: 'response.reasoning_summary_text.done', sequence_number: 6, ...rs, text: 'Think.' },
      { type: 'response.reasoning_summary_part.done', sequence_number: 7, ...rs, part: { type: 'summary_text', text: 'Think.' } },
      { type: 'response.output_item.done', sequence_number: 8, output_index: 0, item: reasoning },
      { type: 'response.output_item.added', sequence_number: 9, output_index: 1, item: messageItem('msg_r1_1', 'in_progress', []) },
      { type: 'response.content_part.added', sequence_number: 10, ...msg, part: textPart('') },
      { type: 'response.output_text.delta', sequence_number: 11, ...msg, delta: 'Hi', logprobs: [] },
      { type: 'response.output_text.done', sequence_number: 12, ...msg, text: 'Hi', logprobs: [] },
      { type: 'response.content_part.done', sequence_number: 13, ...msg, part: textPart('Hi') },
      { type: 'response.output_item.done', sequence_number: 14, output_index: 1, item: message },
      { type: 'response.completed', sequence_number: 15, response: response('completed', [reasoning, message]) },
    ]);
  });

  it('parallel function calls: each its own output_index, arguments streamed (interleaved too), call_id and name in .done', () => {
    const fc = (i: number, callId: string, name: string, a: string, status: string) => ({
      type: 'function_call',
      id: `fc_r1_${i}`,
      call_id: callId,
      name,
      arguments: a,
      status,
    });
    const first = fc(0, 'call_a', 'get_country', '{"city":"Paris"}', 'completed');
    const second = fc(1, 'call_b', 'get_time', '{"tz":"CET"}', 'completed');
    const events = [
      call(0, 'call_a', 'get_country'),
      args(0, '{"city":'),
      call(1, 'call_b', 'get_time'),
      args(1, '{"tz":"CET"}'),
      args(0, '"Paris"}'),
      finish('tool_calls'),
    ];
    assert.deepEqual(encode(events), [
      ...opening,
      { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: fc(0, 'call_a', 'get_country', '', 'in_progress') },
      { type: 'response.function_call_arguments.delta', sequence_number: 3, item_id: 'fc_r1_0', output_index: 0, delta: '{"city":' },
      { type: 'response.output_item.added', sequence_number: 4, output_index: 1, item: fc(1, 'call_b', 'get_time', '', 'in_progress') },
      { type: 'response.function_call_arguments.delta', sequence_number: 5, item_id: 'fc_r1_1', output_index: 1, delta: '{"tz":"CET"}' },
      { type: 'response.function_call_arguments.delta', sequence_number: 6, item_id: 'fc_r1_0', output_index: 0, delta: '"Paris"}' },
      {
        type: 'response.function_call_arguments.done',
        sequence_number: 7,
        item_id: 'fc_r1_0',
        output_index: 0,
        call_id: 'call_a',
        name: 'get_country',
        arguments: '{"city":"Paris"}',
      },
      { type: 'response.output_item.done', sequence_number: 8, output_index: 0, item: first },
      {
        type: 'response.function_call_arguments.done',
        sequence_number: 9,
        item_id: 'fc_r1_1',
        output_index: 1,
        call_id: 'call_b',
        name: 'get_time',
        arguments: '{"tz":"CET"}',
      },
      { type: 'response.output_item.done', sequence_number: 10, output_index: 1, item: second },
      { type: 'response.completed', sequence_number: 11, response: response('completed', [first, second]) },
    ]);
  });

  it('a tool call with no argument deltas: .done still carries the (empty) arguments, call_id and name', () => {
    const item = { type: 'function_call', id: 'fc_r1_0', call_id: 'call_x', name: 'ping', arguments: '', status: 'completed' };
    assert.deepEqual(encode([call(0, 'call_x', 'ping'), args(0, ''), finish('tool_calls')]), [
      ...opening,
      { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: { ...item, status: 'in_progress' } },
      {
        type: 'response.function_call_arguments.done',
        sequence_number: 3,
        item_id: 'fc_r1_0',
        output_index: 0,
        call_id: 'call_x',
        name: 'ping',
        arguments: '',
      },
      { type: 'response.output_item.done', sequence_number: 4, output_index: 0, item },
      { type: 'response.completed', sequence_number: 5, response: response('completed', [item]) },
    ]);
  });

  it('refusal: a refusal part with refusal deltas', () => {
    const where = { item_id: 'msg_r1_0', output_index: 0, content_index: 0 };
    const item = messageItem('msg_r1_0', 'completed', [{ type: 'refusal', refusal: 'I cannot.' }]);
    assert.deepEqual(encode([{ type: 'refusal', choice: 0, text: 'I ' }, { type: 'refusal', choice: 0, text: 'cannot.' }, finish('stop')]), [
      ...opening,
      { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: messageItem('msg_r1_0', 'in_progress', []) },
      { type: 'response.content_part.added', sequence_number: 3, ...where, part: { type: 'refusal', refusal: '' } },
      { type: 'response.refusal.delta', sequence_number: 4, ...where, delta: 'I ' },
      { type: 'response.refusal.delta', sequence_number: 5, ...where, delta: 'cannot.' },
      { type: 'response.refusal.done', sequence_number: 6, ...where, refusal: 'I cannot.' },
      { type: 'response.content_part.done', sequence_number: 7, ...where, part: { type: 'refusal', refusal: 'I cannot.' } },
      { type: 'response.output_item.done', sequence_number: 8, output_index: 0, item },
      { type: 'response.completed', sequence_number: 9, response: response('completed', [item]) },
    ]);
  });

  for (const [reason, incomplete] of [
    ['length', 'max_output_tokens'],
    ['content_filter', 'content_filter'],
  ] as const) {
    it(`${reason} -> response.incomplete with incomplete_details.reason ${incomplete}`, () => {
      const where = { item_id: 'msg_r1_0', output_index: 0, content_index: 0 };
      const item = messageItem('msg_r1_0', 'completed', [textPart('Cut')]);
      assert.deepEqual(encode([text('Cut'), finish(reason)]), [
        ...opening,
        { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: messageItem('msg_r1_0', 'in_progress', []) },
        { type: 'response.content_part.added', sequence_number: 3, ...where, part: textPart('') },
        { type: 'response.output_text.delta', sequence_number: 4, ...where, delta: 'Cut', logprobs: [] },
        { type: 'response.output_text.done', sequence_number: 5, ...where, text: 'Cut', logprobs: [] },
        { type: 'response.content_part.done', sequence_number: 6, ...where, part: textPart('Cut') },
        { type: 'response.output_item.done', sequence_number: 7, output_index: 0, item },
        {
          type: 'response.incomplete',
          sequence_number: 8,
          response: response('incomplete', [item], { incomplete_details: { reason: incomplete } }),
        },
      ]);
    });
  }

  it("a failure mid-stream: open items closed incomplete, then error (sluice's code, the upstream's beside it) and response.failed", () => {
    const where = { item_id: 'msg_r1_0', output_index: 0, content_index: 0 };
    const item = messageItem('msg_r1_0', 'incomplete', [textPart('Par')]);
    const error = new GatewayError({
      code: 'invalid_request',
      upstreamCode: 'tool_use_failed',
      status: 400,
      type: 'invalid_request_error',
      message: 'Tool call validation failed.',
      provider: 'up',
    });
    assert.deepEqual(encode([text('Par')], { error }), [
      ...opening,
      { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: messageItem('msg_r1_0', 'in_progress', []) },
      { type: 'response.content_part.added', sequence_number: 3, ...where, part: textPart('') },
      { type: 'response.output_text.delta', sequence_number: 4, ...where, delta: 'Par', logprobs: [] },
      { type: 'response.output_text.done', sequence_number: 5, ...where, text: 'Par', logprobs: [] },
      { type: 'response.content_part.done', sequence_number: 6, ...where, part: textPart('Par') },
      { type: 'response.output_item.done', sequence_number: 7, output_index: 0, item },
      {
        type: 'error',
        sequence_number: 8,
        error: {
          type: 'invalid_request_error',
          code: 'invalid_request',
          message: 'Tool call validation failed.',
          param: null,
          upstream: { status: null, type: null, code: 'tool_use_failed' },
        },
      },
      {
        type: 'response.failed',
        sequence_number: 9,
        response: response('failed', [item], { error: { code: 'invalid_request', message: 'Tool call validation failed.' } }),
      },
    ]);
  });

  it('the deadline before any output: created, in_progress, then the failure as request_timeout', () => {
    const message = 'Request exceeded the deadline of 0.5s.';
    assert.deepEqual(encode([{ type: 'start' }], { error: errors.deadline(0.5) }), [
      ...opening,
      { type: 'error', sequence_number: 2, error: { type: 'timeout_error', code: 'request_timeout', message, param: null } },
      {
        type: 'response.failed',
        sequence_number: 3,
        response: response('failed', [], { error: { code: 'request_timeout', message } }),
      },
    ]);
  });

  it('only choice 0 is rendered (the Responses API has no n)', () => {
    const other: CanonicalEvent[] = [
      { type: 'text', choice: 1, text: 'other' },
      { type: 'tool-call-start', choice: 1, index: 0, id: 'c', name: 'f' },
      { type: 'finish', choice: 1, reason: 'length' },
    ];
    const item = messageItem('msg_r1_0', 'completed', [textPart('mine')]);
    const events = encode([...other, text('mine'), finish('stop')]);
    assert.deepEqual(
      events.slice(2, -1).map((e) => e.type),
      [
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
      ],
    );
    assert.deepEqual(events.at(-1), { type: 'response.completed', sequence_number: 8, response: response('completed', [item]) });
  });

  it('citations: annotation.added on the output_text part (opened by a citation that comes first), kept in the part', () => {
    const where = { item_id: 'msg_r1_0', output_index: 0, content_index: 0 };
    const cite = (url: string, startIndex: number, endIndex: number): CanonicalEvent => ({
      type: 'annotation',
      choice: 0,
      annotation: { type: 'url_citation', url, title: `T ${url}`, startIndex, endIndex, content: 'an excerpt' },
    });
    const a = (url: string, start: number, end: number) => ({ type: 'url_citation', start_index: start, end_index: end, url, title: `T ${url}` });
    const part = { ...textPart('See docs.'), annotations: [a('https://a.example', 0, 0), a('https://b.example', 4, 8)] };
    const item = messageItem('msg_r1_0', 'completed', [part]);
    assert.deepEqual(encode([cite('https://a.example', 0, 0), text('See docs.'), cite('https://b.example', 4, 8), finish('stop')]), [
      ...opening,
      { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: messageItem('msg_r1_0', 'in_progress', []) },
      { type: 'response.content_part.added', sequence_number: 3, ...where, part: textPart('') },
      { type: 'response.output_text.annotation.added', sequence_number: 4, ...where, annotation_index: 0, annotation: a('https://a.example', 0, 0) },
      { type: 'response.output_text.delta', sequence_number: 5, ...where, delta: 'See docs.', logprobs: [] },
      { type: 'response.output_text.annotation.added', sequence_number: 6, ...where, annotation_index: 1, annotation: a('https://b.example', 4, 8) },
      { type: 'response.output_text.done', sequence_number: 7, ...where, text: 'See docs.', logprobs: [] },
      { type: 'response.content_part.done', sequence_number: 8, ...where, part },
      { type: 'response.output_item.done', sequence_number: 9, output_index: 0, item },
      { type: 'response.completed', sequence_number: 10, response: response('completed', [item]) },
    ]);
  });

  it('max_tool_calls: the calls past the limit are left out, as OpenAI ignores them', () => {
    const events = [call(0, 'call_a', 'f'), args(0, '{}'), call(1, 'call_b', 'g'), args(1, '{"x":1}'), finish('tool_calls')];
    const wire = encode(events, null, { ...request, max_tool_calls: 1 });
    const terminal = wire.at(-1) as { response: { output: { call_id: string }[]; max_tool_calls: number } };
    assert.deepEqual(
      terminal.response.output.map((item) => item.call_id),
      ['call_a'],
    );
    assert.equal(terminal.response.max_tool_calls, 1);
    assert.equal(
      wire.some((e) => JSON.stringify(e).includes('call_b')),
      false,
    );
  });

  it("logprobs ride on the output_text deltas and the part's done, as the provider gave them", () => {
    const logprob = { token: 'Hi', logprob: -0.1, bytes: [72, 105], top_logprobs: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105] }] };
    const wire = encode([{ type: 'text', choice: 0, text: 'Hi', logprobs: [logprob] }, finish('stop')]);
    const delta = wire.find((e) => e.type === 'response.output_text.delta');
    const done = wire.find((e) => e.type === 'response.output_text.done');
    assert.deepEqual([delta?.logprobs, done?.logprobs], [[logprob], [logprob]]);
  });
});

describe('ResponsesEventEncoder: the MCP calls sluice runs', () => {
  const mcp = (step: Extract<CanonicalEvent, { type: 'mcp' }>['step']): CanonicalEvent => ({ type: 'mcp', step });
  const listed = mcp({ kind: 'list-tools', server: 'calc', tools: [{ name: 'add', description: 'Adds', inputSchema: { type: 'object' } }] });
  const started = mcp({ kind: 'call-start', id: 'call_1', server: 'calc', name: 'add' });
  const argued = mcp({ kind: 'call-arguments', id: 'call_1', delta: '{"a":2}' });
  const done = (output: string | null, error: string | null) =>
    mcp({ kind: 'call-done', id: 'call_1', server: 'calc', name: 'add', arguments: '{"a":2}', output, error });

  it("as OpenAI's mcp_list_tools and mcp_call items, with their events, then the answer", () => {
    const wire = encode([listed, started, argued, done('2', null), text('It is 2.'), finish('stop')]);
    const types = wire.map((e) => e.type);
    assert.deepEqual(types.slice(2, 14), [
      'response.output_item.added',
      'response.mcp_list_tools.in_progress',
      'response.mcp_list_tools.completed',
      'response.output_item.done',
      'response.output_item.added',
      'response.mcp_call.in_progress',
      'response.mcp_call_arguments.delta',
      'response.mcp_call_arguments.done',
      'response.mcp_call.completed',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    const terminal = wire.at(-1) as { type: string; response: { output: Record<string, unknown>[] } };
    assert.equal(terminal.type, 'response.completed');
    const [list, call] = terminal.response.output;
    assert.deepEqual(list, {
      type: 'mcp_list_tools',
      id: 'mcpl_r1_0',
      server_label: 'calc',
      tools: [{ name: 'add', description: 'Adds', input_schema: { type: 'object' }, annotations: null }],
      error: null,
    });
    assert.deepEqual(call, {
      type: 'mcp_call',
      id: 'mcp_r1_1',
      server_label: 'calc',
      name: 'add',
      arguments: '{"a":2}',
      output: '2',
      error: null,
      status: 'completed',
    });
  });

  it('a failed call is response.mcp_call.failed with its error', () => {
    const wire = encode([started, done(null, 'not allowed'), text('Sorry.'), finish('stop')]);
    assert.ok(wire.some((e) => e.type === 'response.mcp_call.failed'));
    const item = wire.find((e) => e.type === 'response.output_item.done')?.item as Record<string, unknown>;
    assert.deepEqual([item.status, item.error, item.output], ['failed', 'not allowed', null]);
  });

  it('the step limit makes the response incomplete, reason max_steps; a call left open is closed as failed', () => {
    const wire = encode([started, argued, mcp({ kind: 'max-steps', steps: 3 }), finish('length')]);
    const terminal = wire.at(-1) as { type: string; response: { incomplete_details: unknown; output: { status: string }[] } };
    assert.equal(terminal.type, 'response.incomplete');
    assert.deepEqual(terminal.response.incomplete_details, { reason: 'max_steps' });
    assert.equal(terminal.response.output[0].status, 'failed');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { assemble } from '../../protocol/canonical/assemble.ts';
import { anthropicPayloads, anthropicStreamBody } from '../../../test/helpers/anthropic-fixtures.ts';
import { args, call, finish, reasoning, signature, start, text } from '../../../test/helpers/canonical-events.ts';
import { decodeAll } from '../../../test/helpers/decode.ts';
import { splitRandomly } from '../../../test/helpers/fake-upstream.ts';
import { listFixtures } from '../../../test/helpers/fixtures.ts';
import { RESPONSE_FORMAT_TOOL } from '../response-format-tool.ts';
import { decodeAnthropicResponse } from './decode-response.ts';
import { createAnthropicStreamDecoder } from './decode-stream.ts';

const decode = (pieces: Uint8Array[]) => decodeAll(createAnthropicStreamDecoder(), pieces);

const decodeText = (text: string) => decode([Buffer.from(text)]);

const usage = (inputTokens: number, outputTokens: number, cachedInputTokens = 0, cacheWriteTokens = 0): CanonicalEvent => ({
  type: 'usage',
  usage: { inputTokens, outputTokens, cachedInputTokens, cacheWriteTokens, source: 'provider' },
});

/**
 * The long text-and-thinking recordings, read independently: every delta is one event, in order,
 * between the start usage and the final one. Only the shapes these recordings contain.
 */
function expectedFromPayloads(name: string): CanonicalEvent[] {
  const out: CanonicalEvent[] = [];
  for (const p of anthropicPayloads(name)) {
    if (p.type === 'message_start') {
      const u = p.message.usage;
      out.push(start(p.message.id, p.message.model));
      out.push(
        usage(
          u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
          u.output_tokens,
          u.cache_read_input_tokens,
          u.cache_creation_input_tokens,
        ),
      );
    } else if (p.type === 'content_block_delta') {
      const d = p.delta;
      if (d.type === 'text_delta') out.push(text(d.text));
      else if (d.type === 'thinking_delta') {
        if (d.thinking !== '') out.push(reasoning(d.thinking)); // the recording ends thinking with an empty delta
      } else if (d.type === 'signature_delta') out.push(signature(d.signature));
      else throw new Error(`unexpected delta ${d.type}`);
    } else if (p.type === 'message_delta') {
      assert.equal(p.delta.stop_reason, 'end_turn');
      out.push(finish('stop', 'end_turn'));
      const first = out[1] as Extract<CanonicalEvent, { type: 'usage' }>;
      out.push({ type: 'usage', usage: { ...first.usage, outputTokens: p.usage.output_tokens } });
    }
  }
  return out;
}

const expected: Record<string, () => CanonicalEvent[]> = {
  'anthropic/text-haiku45.sse': () => [
    start('msg_011CeCGmCzjcUtmtEmMdEiM2', 'claude-haiku-4-5-20251001'),
    usage(15, 1),
    text('1\n2\n3'),
    finish('stop', 'end_turn'),
    usage(15, 9),
  ],
  'anthropic/text-haiku45-2.sse': () => [
    start('msg_011CeCGmGRc8bSVtYuB5b7yR', 'claude-haiku-4-5-20251001'),
    usage(15, 1),
    text('1\n2\n3'),
    finish('stop', 'end_turn'),
    usage(15, 9),
  ],
  'anthropic/text-sonnet45.jsonl': () => [
    start('msg_01QC4g3HwBThD4BaNtBckFDJ', 'claude-sonnet-4-5-20250929'),
    usage(12, 1),
    text('Hello'),
    text('! I'),
    text("'m doing well, thank you for asking"),
    text('. How are you doing today?'),
    text(' Is'),
    text(' there anything I can help you with?'),
    finish('stop', 'end_turn'),
    usage(12, 30),
  ],
  'anthropic/text-after-tool-result.sse': () => [
    start('msg_011CeCGpH9MJ5rZjgU8FoSDu', 'claude-haiku-4-5-20251001'),
    usage(748, 3),
    text('The weather in'),
    text(" Berlin is currently:\n- **Temperature:** 15°C\n- **Wind:** 10 km/h\n\nIt's relatively mild with a light"),
    text(' breeze. Perfect for a walk around the city!'),
    finish('stop', 'end_turn'),
    usage(748, 49),
  ],
  'anthropic/tool-use.sse': () => [
    start('msg_011CeCGpBQa4v1oPovDvN4gx', 'claude-haiku-4-5-20251001'),
    usage(633, 22),
    call(0, 'toolu_01MKSN7NHsBVKr7Jvw5pqCQq', 'weather'),
    args(0, '{"latitude"'),
    args(0, ': '),
    args(0, '"52.5200"'),
    args(0, ', "long'),
    args(0, 'itude": '),
    args(0, '"13.4050"}'),
    finish('tool_calls', 'tool_use'),
    usage(633, 75),
  ],
  'anthropic/tool-no-args.jsonl': () => [
    start('msg_01GE2RKp1VYsPzdFs3sS9z5S', 'claude-sonnet-4-5-20250929'),
    usage(565, 7),
    text("I'll update the issue list for"),
    text(' you.'),
    call(0, 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', 'updateIssueList'),
    args(0, '{}'),
    finish('tool_calls', 'tool_use'),
    usage(565, 48),
  ],
  'anthropic/parallel-tool-use.sse': () => [
    start('msg_0138UNF3YbNp49KkqZtUBWqz', 'claude-3-5-sonnet-20240620'),
    usage(506, 5),
    text('Certainly! I can'),
    text(' help you with that information'),
    text('. To'),
    text(' get the weather'),
    text(' and current time in San'),
    text(" Francisco, I'll nee"),
    text('d to use two separate'),
    text(' functions.'),
    text(' Let me fetch that data'),
    text(' for you.'),
    call(0, 'toolu_014x5X91kx3fvdhpLvwXZWE2', 'get_weather'),
    args(0, '{"'),
    args(0, 'locati'),
    args(0, 'on": "San F'),
    args(0, 'ra'),
    args(0, 'ncisco,'),
    args(0, ' CA"'),
    args(0, ', "unit"'),
    args(0, ': "celsius"}'),
    call(1, 'toolu_0121kXsENLvoDZ72LCuAnCCz', 'get_time'),
    args(1, '{"timez'),
    args(1, 'one":'),
    args(1, ' "America/L'),
    args(1, 'os_Angele'),
    args(1, 's"}'),
    finish('tool_calls', 'tool_use'),
    usage(506, 153),
  ],
  'anthropic/thinking-signature.sse': () => expectedFromPayloads('anthropic/thinking-signature.sse'),
  'anthropic/prompt-cache-write.sse': () => expectedFromPayloads('anthropic/prompt-cache-write.sse'),
  'anthropic/prompt-cache-read.sse': () => expectedFromPayloads('anthropic/prompt-cache-read.sse'),
};

describe('anthropic stream decoder on the recordings', () => {
  const recordings = listFixtures('anthropic', ['.sse', '.jsonl']);

  it('has an expectation for every recording', () => {
    assert.deepEqual(recordings, Object.keys(expected).sort());
  });

  for (const name of recordings) {
    it(`${name}: the whole event list`, () => {
      assert.deepEqual(decode([anthropicStreamBody(name)]), expected[name]());
    });

    it(`${name}: 20 random splits give the same events`, () => {
      const body = anthropicStreamBody(name);
      const whole = decode([body]);
      for (let seed = 1; seed <= 20; seed++) {
        assert.deepEqual(decode(splitRandomly(body, seed, 48)), whole, `seed ${seed}`);
      }
    });
  }

  it('assembles the parallel tool calls with their arguments', () => {
    const message = assemble(decode([anthropicStreamBody('anthropic/parallel-tool-use.sse')]));
    const choice = message.choices[0];
    assert.equal(
      choice.text,
      "Certainly! I can help you with that information. To get the weather and current time in San Francisco, I'll need to use two separate functions. Let me fetch that data for you.",
    );
    assert.deepEqual(choice.toolCalls, [
      { id: 'toolu_014x5X91kx3fvdhpLvwXZWE2', name: 'get_weather', arguments: '{"location": "San Francisco, CA", "unit": "celsius"}' },
      { id: 'toolu_0121kXsENLvoDZ72LCuAnCCz', name: 'get_time', arguments: '{"timezone": "America/Los_Angeles"}' },
    ]);
    assert.equal(choice.finishReason, 'tool_calls');
    assert.deepEqual(message.usage, { inputTokens: 506, outputTokens: 153, cachedInputTokens: 0, cacheWriteTokens: 0, source: 'provider' });
    assert.deepEqual(message.start, { type: 'start', upstreamId: 'msg_0138UNF3YbNp49KkqZtUBWqz', upstreamModel: 'claude-3-5-sonnet-20240620' });
  });

  it('assembles a tool call without arguments as "{}"', () => {
    const choice = assemble(decode([anthropicStreamBody('anthropic/tool-no-args.jsonl')])).choices[0];
    assert.equal(choice.text, "I'll update the issue list for you.");
    assert.deepEqual(choice.toolCalls, [{ id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'updateIssueList', arguments: '{}' }]);
    assert.equal(choice.finishReason, 'tool_calls');
  });

  it('assembles thinking with its signature, then the answer', () => {
    const message = assemble(decode([anthropicStreamBody('anthropic/thinking-signature.sse')]));
    const choice = message.choices[0];
    assert.equal(
      choice.reasoning,
      'This is a straightforward question about pedestrian safety. I should provide clear, helpful advice about how to safely cross a street. This is basic safety information that could help prevent accidents.',
    );
    const recorded = anthropicPayloads('anthropic/thinking-signature.sse').find((p) => p.delta?.type === 'signature_delta');
    assert.ok(choice.reasoningSignature?.startsWith('EvMCCkYICxgCKkCHP2cSuEdcJK/0rFwqES/'));
    assert.equal(choice.reasoningSignature, recorded?.delta.signature);
    assert.ok(choice.text?.startsWith('Here are the basic steps for'));
    assert.ok(choice.text?.endsWith('Always prioritize safety over speed when crossing streets.'));
    assert.deepEqual(choice.redactedReasoning, []);
    assert.equal(choice.finishReason, 'stop');
    assert.deepEqual(message.usage, { inputTokens: 43, outputTokens: 282, cachedInputTokens: 0, cacheWriteTokens: 0, source: 'provider' });
  });

  it('counts cache writes and cache reads inside the input tokens', () => {
    const write = assemble(decode([anthropicStreamBody('anthropic/prompt-cache-write.sse')]));
    const read = assemble(decode([anthropicStreamBody('anthropic/prompt-cache-read.sse')]));
    assert.deepEqual(write.usage, { inputTokens: 1169, outputTokens: 201, cachedInputTokens: 0, cacheWriteTokens: 1165, source: 'provider' });
    assert.deepEqual(read.usage, { inputTokens: 1169, outputTokens: 221, cachedInputTokens: 1165, cacheWriteTokens: 0, source: 'provider' });
    assert.ok(write.choices[0].text?.startsWith('Here are concise summaries of the three articles:\n\n1. OpenLLMetry'));
    assert.ok(read.choices[0].text?.startsWith('Here are concise summaries of the three articles:\n\n1. OpenLLMetry'));
  });
});

const frame = (payload: object) => `event: ${(payload as { type: string }).type}\ndata: ${JSON.stringify(payload)}\n\n`;
const messageStart = frame({
  type: 'message_start',
  message: { id: 'msg_1', model: 'claude-x', usage: { input_tokens: 10, output_tokens: 1 } },
});

describe('anthropic stream decoder on synthetic streams', () => {
  it('turns an error event after output into an error event with the HTTP status of its type', () => {
    const events = decodeText(
      messageStart +
        frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
        frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } }) +
        frame({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }) +
        frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ignored' } }),
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['start', 'usage', 'text', 'error'],
    );
    const error = events[3] as Extract<CanonicalEvent, { type: 'error' }>;
    assert.deepEqual(
      [error.error.status, error.error.code, error.error.upstreamType, error.error.message],
      [503, 'upstream_overloaded', 'overloaded_error', 'Overloaded'],
    );
  });

  it('makes up the id of a tool_use block whose id is empty, and fails the stream on one without a name', () => {
    const toolStart = (id: string, name: string) =>
      frame({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id, name, input: {} } });
    const [, , started] = decodeText(messageStart + toolStart('', 'get_weather'));
    assert.equal(started?.type, 'tool-call-start');
    assert.match((started as { id: string }).id, /^call_[\w-]{16}$/);

    const events = decodeText(
      messageStart +
        toolStart('toolu_1', '') +
        frame({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{}' } }),
    );
    assert.deepEqual(
      events.map((e) => (e.type === 'error' ? e.error.code : e.type)),
      ['start', 'usage', 'upstream_malformed_stream'],
    );
  });

  it('reports a rate limit error before any output as a 429', () => {
    const [event] = decodeText(frame({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }));
    assert.equal(event.type, 'error');
    assert.deepEqual([event.error.status, event.error.message], [429, 'slow down']);
  });

  it('keeps redacted thinking as redacted reasoning, and thinking that arrives whole', () => {
    const events = decodeText(
      messageStart +
        frame({ type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking', data: 'EncryptedBlob' } }) +
        frame({ type: 'content_block_stop', index: 0 }) +
        frame({ type: 'content_block_start', index: 1, content_block: { type: 'thinking', thinking: 'hmm', signature: 'sig' } }) +
        frame({ type: 'content_block_stop', index: 1 }) +
        frame({ type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 4 } }) +
        frame({ type: 'message_stop' }),
    );
    assert.deepEqual(events, [
      start('msg_1', 'claude-x'),
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 1, source: 'provider' } },
      { type: 'reasoning', choice: 0, text: '', redacted: 'EncryptedBlob' },
      reasoning('hmm'),
      signature('sig'),
      finish('length', 'max_tokens'),
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 4, source: 'provider' } },
    ]);
  });

  it('ignores unknown event types, server tool blocks and citation deltas', () => {
    const events = decodeText(
      messageStart +
        frame({ type: 'content_block_start', index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search' } }) +
        frame({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"q":1}' } }) +
        frame({ type: 'content_block_stop', index: 0 }) +
        frame({ type: 'content_block_delta', index: 1, delta: { type: 'citations_delta', citation: {} } }) +
        frame({ type: 'future_event', whatever: true }) +
        frame({ type: 'message_delta', delta: { stop_reason: 'refusal' }, usage: { output_tokens: 2 } }),
    );
    assert.deepEqual(events, [
      start('msg_1', 'claude-x'),
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 1, source: 'provider' } },
      { type: 'finish', choice: 0, reason: 'content_filter', rawReason: 'refusal' },
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 2, source: 'provider' } },
    ]);
  });

  it('fails the stream on an event that is not JSON, and reads nothing after it', () => {
    const events = decodeText(`${messageStart}event: content_block_delta\ndata: {oops\n\n${frame({ type: 'message_stop' })}`);
    assert.deepEqual(
      events.map((e) => e.type),
      ['start', 'usage', 'error'],
    );
    const error = events[2] as Extract<CanonicalEvent, { type: 'error' }>;
    assert.deepEqual([error.error.code, error.error.status], ['upstream_malformed_stream', 502]);
    assert.equal(error.error.message, 'The anthropic stream could not be decoded: event is not a JSON object: {oops');
  });

  it('fails the stream on a line that is not server-sent events', () => {
    const events = decodeText(`${messageStart}<html>gateway timeout</html>\n\n`);
    assert.deepEqual(
      events.map((e) => e.type),
      ['start', 'usage', 'error'],
    );
  });

  it('gives no finish for a stream cut before message_delta (the pipeline reports it truncated)', () => {
    const events = decodeText(messageStart + frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'Hel' } }));
    assert.deepEqual(events, [
      start('msg_1', 'claude-x'),
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 1, source: 'provider' } },
      text('Hel'),
    ]);
  });
});

describe('anthropic stream decoder: the forced tool of a JSON response format', () => {
  /** The tool-use recording as the answer tool's call: the same stream, another tool name. */
  const asAnswer = (name: string) =>
    Buffer.from(anthropicStreamBody(name).toString('utf8').replaceAll('"name":"weather"', `"name":"${RESPONSE_FORMAT_TOOL}"`));

  it('streams the tool input as text deltas and finishes with stop (tool-use.sse renamed)', () => {
    const events = decode(splitRandomly(asAnswer('anthropic/tool-use.sse'), 7));
    assert.equal(
      events.some((e) => e.type === 'tool-call-start' || e.type === 'tool-call-delta'),
      false,
    );
    const message = assemble(events).choices[0];
    assert.equal(message.text, '{"latitude": "52.5200", "longitude": "13.4050"}');
    assert.deepEqual(message.toolCalls, []);
    assert.equal(message.finishReason, 'stop');
    assert.deepEqual(
      events.find((e) => e.type === 'finish'),
      finish('stop', 'tool_use'),
    );
  });

  it('an empty input is the answer {}', () => {
    const events = decodeText(
      messageStart +
        frame({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't', name: RESPONSE_FORMAT_TOOL, input: {} } }) +
        frame({ type: 'content_block_stop', index: 0 }) +
        frame({ type: 'message_delta', delta: { stop_reason: 'tool_use' } }),
    );
    assert.deepEqual(events.slice(2), [text('{}'), finish('stop', 'tool_use')]);
  });

  it("beside a call of the client's tools, the call keeps index 0 and the finish stays tool_calls", () => {
    const events = decodeText(
      messageStart +
        frame({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'a', name: RESPONSE_FORMAT_TOOL, input: {} } }) +
        frame({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"x":1}' } }) +
        frame({ type: 'content_block_stop', index: 0 }) +
        frame({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'b', name: 'lookup', input: {} } }) +
        frame({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"q":2}' } }) +
        frame({ type: 'content_block_stop', index: 1 }) +
        frame({ type: 'message_delta', delta: { stop_reason: 'tool_use' } }),
    );
    assert.deepEqual(events.slice(2), [text('{"x":1}'), call(0, 'b', 'lookup'), args(0, '{"q":2}'), finish('tool_calls', 'tool_use')]);
  });

  it('the non-stream decoder gives the same answer', () => {
    const events = decodeAnthropicResponse({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-3-7-sonnet',
      content: [{ type: 'tool_use', id: 't', name: RESPONSE_FORMAT_TOOL, input: { city: 'Paris' } }],
      stop_reason: 'tool_use',
      usage: { input_tokens: 5, output_tokens: 9 },
    });
    const message = assemble(events).choices[0];
    assert.equal(message.text, '{"city":"Paris"}');
    assert.equal(message.finishReason, 'stop');
  });
});

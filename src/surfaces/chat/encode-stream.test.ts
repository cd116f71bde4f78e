import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { STREAM_PROFILES } from '../../protocol/stream-profiles.ts';
import { ChatChunkEncoder, type ChatChunkEncoderOptions } from './encode-stream.ts';

const options: ChatChunkEncoderOptions = {
  id: 'chatcmpl-1',
  created: 1700000000,
  model: 'openrouter/deepseek/deepseek-chat',
  provider: 'openrouter',
  includeUsage: false,
  usageExtensions: false,
  stream: STREAM_PROFILES.openai.chat,
};

const cite: CanonicalEvent = {
  type: 'annotation',
  choice: 0,
  annotation: { type: 'url_citation', url: 'https://a.example', title: 'A', startIndex: 0, endIndex: 0, content: 'excerpt' },
};

/** The chunk objects of the frames the encoder wrote for these events. */
function chunks(events: CanonicalEvent[], extra: Partial<ChatChunkEncoderOptions> = {}): Record<string, any>[] {
  const encoder = new ChatChunkEncoder({ ...options, ...extra });
  const wire = events.map((e) => encoder.encode(e)).join('');
  return wire
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => JSON.parse(frame.slice('data: '.length)));
}

describe('ChatChunkEncoder: citations', () => {
  it('sends each citation as a delta with `annotations`, in the chat url_citation shape (the excerpt kept)', () => {
    const out = chunks([{ type: 'start' }, cite, { type: 'text', choice: 0, text: 'See' }]);
    assert.deepEqual(
      out.map((c) => c.choices[0].delta),
      [
        { role: 'assistant', content: '' },
        {
          annotations: [
            { type: 'url_citation', url_citation: { url: 'https://a.example', title: 'A', start_index: 0, end_index: 0, content: 'excerpt' } },
          ],
        },
        { content: 'See' },
      ],
    );
    assert.ok(out.every((c) => c.id === 'chatcmpl-1' && c.object === 'chat.completion.chunk'));
  });

  it('in the accounting profile, with the flat type `annotation` and the URL as data', () => {
    const [, frame] = chunks([cite], { stream: STREAM_PROFILES.accounting.chat });
    assert.deepEqual([frame.type, frame.data, frame.provider], ['annotation', 'https://a.example', 'openrouter']);
  });

  it('nothing for a choice that already finished', () => {
    const out = chunks([{ type: 'finish', choice: 0, reason: 'stop' }, cite]);
    assert.deepEqual(
      out.map((c) => c.choices[0].finish_reason),
      [null, 'stop'],
    );
  });
});

describe('ChatChunkEncoder: the error frame', () => {
  const error = new GatewayError({
    code: 'upstream_error',
    status: 502,
    type: 'upstream_error',
    message: 'boom',
    upstreamStatus: 500,
    upstreamType: 'server_error',
    upstreamCode: 'overloaded',
  });
  const errorOf = (frame: string) => JSON.parse(frame.slice('data: '.length));

  it("openai profile: sluice's type and code, the upstream's own beside them", () => {
    assert.deepEqual(errorOf(new ChatChunkEncoder(options).errorFrame(error)), {
      error: {
        message: 'boom',
        type: 'upstream_error',
        code: 'upstream_error',
        upstream: { status: 500, type: 'server_error', code: 'overloaded' },
      },
    });
  });

  it("accounting profile: flat, with the usage so far in usage_final's fields, naming the provider routing fell back to", () => {
    const encoder = new ChatChunkEncoder({ ...options, stream: STREAM_PROFILES.accounting.chat });
    encoder.encode({
      type: 'fallback',
      from: { provider: 'openrouter', model: 'a' },
      to: { provider: 'groq', model: 'b' },
      reason: 'rate_limited',
    });
    const usage = { inputTokens: 12, outputTokens: 3, source: 'estimated' as const };
    assert.deepEqual(errorOf(encoder.errorFrame(error, { usage, costUsd: 0.5, latencyMs: 40 })), {
      type: 'error',
      data: 'boom',
      provider: 'groq',
      code: 'upstream_error',
      upstream: { status: 500, type: 'server_error', code: 'overloaded' },
      input_tokens: 12,
      output_tokens: 3,
      cost_usd: 0.5,
      latency_ms: 40,
      estimated: true,
    });
  });
});

describe('regression: an upstream could inject JSON through choices[].index', () => {
  it('refuses a choice index it cannot write as a small integer: decoders never emit one, so it is a sluice bug', () => {
    for (const choice of ['0,"x":1', {}, Number.POSITIVE_INFINITY, -1, 0.5, 128]) {
      const encoder = new ChatChunkEncoder(options);
      assert.throws(() => encoder.encode({ type: 'text', choice: choice as number, text: 'x' }), /invalid choice index/, String(choice));
    }
  });

  it('writes every choice index below 128', () => {
    const encoder = new ChatChunkEncoder(options);
    const frame = encoder.encode({ type: 'text', choice: 127, text: 'x' });
    assert.equal(JSON.parse(frame.split('\n\n')[0].slice('data: '.length)).choices[0].index, 127);
  });
});

describe('ChatChunkEncoder: vendor events', () => {
  const vendor: CanonicalEvent = { type: 'vendor', data: '{"type":"x_artifact.created","artifact_id":"a1"}' };

  it('drops them by default', () => {
    assert.equal(new ChatChunkEncoder(options).encode(vendor), '');
  });

  it("passes them through as the upstream's data line, with chunks or accounting frames", () => {
    for (const frames of ['chunks', 'accounting'] as const) {
      const encoder = new ChatChunkEncoder({ ...options, stream: { ...options.stream, frames, vendorEvents: 'passthrough' } });
      encoder.encode({ type: 'text', choice: 0, text: 'Hi' });
      assert.equal(encoder.encode(vendor), 'data: {"type":"x_artifact.created","artifact_id":"a1"}\n\n');
    }
  });

  it('sends the role chunk before a vendor event that comes first (was: the vendor event before it)', () => {
    const encoder = new ChatChunkEncoder({ ...options, stream: { ...options.stream, vendorEvents: 'passthrough' } });
    const frames = [vendor, vendor, { type: 'text', choice: 0, text: 'Hi' } as const].map((e) => encoder.encode(e)).join('');
    assert.deepEqual(
      frames
        .split('\n\n')
        .filter(Boolean)
        .map((f) => JSON.parse(f.slice('data: '.length)))
        .map((p) => p.type ?? p.choices[0].delta),
      [{ role: 'assistant', content: '' }, 'x_artifact.created', 'x_artifact.created', { content: 'Hi' }],
    );
  });
});

describe('ChatChunkEncoder: MCP calls sluice ran', () => {
  const ran: CanonicalEvent = {
    type: 'mcp',
    step: { kind: 'call-done', id: 'call_1', server: 'calc', name: 'add', arguments: '{"a":2}', output: '2', error: null },
  };

  it('sends each on a chunk of its own with empty choices and the `sluice` extension, never as tool_calls', () => {
    const out = chunks([
      { type: 'mcp', step: { kind: 'call-start', id: 'call_1', server: 'calc', name: 'add' } },
      { type: 'mcp', step: { kind: 'call-arguments', id: 'call_1', delta: '{"a":2}' } },
      ran,
      { type: 'mcp', step: { kind: 'max-steps', steps: 8 } },
    ]);
    assert.deepEqual(out[0].choices[0].delta, { role: 'assistant', content: '' });
    assert.deepEqual(
      out.slice(1).map((c) => [c.choices, c.sluice]),
      [
        [
          [],
          {
            mcp_call: { id: 'call_1', type: 'mcp_call', server_label: 'calc', name: 'add', arguments: '{"a":2}', output: '2', error: null },
          },
        ],
        [[], { mcp_max_steps: 8 }],
      ],
    );
  });

  it('sends nothing of them in the accounting profile', () => {
    assert.deepEqual(chunks([ran], { stream: STREAM_PROFILES.accounting.chat }), []);
  });
});

describe('ChatChunkEncoder: content filter verdicts (Azure)', () => {
  const verdict = (severity: string) => ({ violence: { filtered: severity !== 'safe', severity } });
  const filter = (choice: number, severity: string): CanonicalEvent => ({ type: 'content-filter', choice, results: verdict(severity) });

  it("puts the prompt's on a chunk with no choices and a choice's on the chunk of the delta that follows", () => {
    const prompt = [{ prompt_index: 0, content_filter_results: verdict('safe') }];
    const out = chunks([
      { type: 'start' },
      { type: 'content-filter', choice: null, results: prompt },
      filter(0, 'safe'),
      { type: 'text', choice: 0, text: 'Hi' },
      filter(0, 'low'),
      { type: 'finish', choice: 0, reason: 'stop' },
    ]);
    assert.deepEqual(out[0].prompt_filter_results, prompt);
    assert.deepEqual(out[0].choices, []);
    assert.deepEqual(
      out.slice(1).map((c) => [c.choices[0].delta, c.choices[0].finish_reason, c.choices[0].content_filter_results]),
      [
        [{ role: 'assistant', content: '' }, null, undefined],
        [{ content: 'Hi' }, null, verdict('safe')],
        [{}, 'stop', verdict('low')],
      ],
    );
  });

  it('sends verdicts with no delta of their own on the role chunk, or on an empty delta after the finish', () => {
    const out = chunks([
      { type: 'start' },
      filter(0, 'safe'),
      filter(0, 'low'),
      { type: 'text', choice: 0, text: 'Hi' },
      { type: 'finish', choice: 0, reason: 'content_filter' },
      filter(0, 'high'),
    ]);
    assert.deepEqual(
      out.map((c) => [c.choices[0].delta, c.choices[0].finish_reason, c.choices[0].content_filter_results]),
      [
        [{ role: 'assistant', content: '' }, null, verdict('safe')],
        [{ content: 'Hi' }, null, verdict('low')],
        [{}, 'content_filter', undefined],
        [{}, null, verdict('high')],
      ],
    );
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { assemble } from '../../protocol/canonical/assemble.ts';
import type { FinishReason } from '../../protocol/canonical/finish-reason.ts';
import type { Usage } from '../../protocol/canonical/usage.ts';
import { args, call, finish, reasoning, signature, start, text } from '../../../test/helpers/canonical-events.ts';
import { decodeAll } from '../../../test/helpers/decode.ts';
import { splitRandomly } from '../../../test/helpers/fake-upstream.ts';
import { listFixtures } from '../../../test/helpers/fixtures.ts';
import { geminiPayloads, geminiStreamBody } from '../../../test/helpers/gemini-fixtures.ts';
import { createGeminiStreamDecoder } from './decode-stream.ts';

/** Call ids are generated (Gemini sends none): a counter makes them predictable here. */
function decode(pieces: Uint8Array[]): CanonicalEvent[] {
  let n = 0;
  return decodeAll(createGeminiStreamDecoder({ provider: 'google', newCallId: () => `call_${++n}` }), pieces);
}

const decodeText = (text: string) => decode([Buffer.from(text)]);
const frames = (...payloads: unknown[]) => payloads.map((p) => `data: ${JSON.stringify(p)}\r\n\r\n`).join('');

const usage = (inputTokens: number, outputTokens: number, reasoningTokens?: number): CanonicalEvent => ({
  type: 'usage',
  usage: { inputTokens, outputTokens, source: 'provider', ...(reasoningTokens !== undefined && { reasoningTokens }) },
});

/** The thoughtSignature of the first part that has one in payload `chunk` of a recording. */
function signatureIn(name: string, chunk: number): string {
  const parts = geminiPayloads(name)[chunk].candidates[0].content.parts as { thoughtSignature?: string }[];
  const found = parts.find((p) => p.thoughtSignature)?.thoughtSignature;
  assert.ok(found);
  return found;
}

/**
 * The long thinking recording, read independently: thought parts are reasoning, the signature
 * precedes the text of its part, usage is emitted when the running totals change.
 */
function expectedFromPayloads(name: string): CanonicalEvent[] {
  const out: CanonicalEvent[] = [];
  let lastUsage = '';
  for (const p of geminiPayloads(name)) {
    if (out.length === 0) out.push(start(p.responseId, p.modelVersion));
    const c = p.candidates[0];
    for (const part of c.content.parts) {
      if (part.thought) out.push(reasoning(part.text));
      else {
        if (part.thoughtSignature) out.push(signature(part.thoughtSignature));
        out.push(text(part.text));
      }
    }
    if (c.finishReason) {
      assert.equal(c.finishReason, 'STOP');
      out.push(finish('stop', 'STOP'));
    }
    const u = p.usageMetadata;
    const e = usage(u.promptTokenCount, (u.candidatesTokenCount ?? 0) + u.thoughtsTokenCount, u.thoughtsTokenCount);
    if (JSON.stringify(e) !== lastUsage) out.push(e);
    lastUsage = JSON.stringify(e);
  }
  return out;
}

const expected: Record<string, () => CanonicalEvent[]> = {
  'gemini/function-call-2.0-flash.sse': () => [
    start('1lpeaMTxIpW1nvgP-O3vwQY', 'gemini-2.0-flash'),
    call(0, 'call_1', 'get_capital'),
    args(0, '{"country":"France"}'),
    finish('tool_calls', 'STOP'),
    usage(52, 5),
  ],
  'gemini/function-call-thought-signature-2.5-flash.sse': () => [
    start('U7-Fao_EK_-VvdIP1-aJ8Qo', 'gemini-2.5-flash'),
    signature(signatureIn('gemini/function-call-thought-signature-2.5-flash.sse', 0)),
    call(0, 'call_1', 'weather'),
    args(0, '{"latitude":"52.5200","longitude":"13.4050"}'),
    finish('tool_calls', 'STOP'),
    usage(103, 73, 43),
  ],
  'gemini/reasoning-gemini3-pro.jsonl': () => [
    start('M3iLaY-AI7zTxN8P3Piw4Qg', 'gemini-3-pro-preview'),
    text('There are **3** "r"s in strawberry.\n\n'),
    usage(9, 315, 302),
    text('St**r**awbe**rr**y'),
    usage(9, 325, 302),
    // The last chunk: an empty text part carrying only the signature; its usage is unchanged.
    signature(signatureIn('gemini/reasoning-gemini3-pro.jsonl', 2)),
    finish('stop', 'STOP'),
  ],
  'gemini/text-2.0-flash.sse': () => [
    start('w1peaMz6INOvnvgPgYfPiQY', 'gemini-2.0-flash-exp'),
    text('The'),
    usage(15, 0),
    text(' capital of France'),
    text(' is Paris.\n'),
    finish('stop', 'STOP'),
    usage(13, 8),
  ],
  'gemini/text-2.5-flash.sse': () => [
    start('6r6FarDODNmynsEP8cLCoQk', 'gemini-2.5-flash'),
    text('1, 2, 3'),
    finish('stop', 'STOP'),
    usage(8, 27, 20),
  ],
  'gemini/text-after-function-response-2.0-flash.sse': () => [
    start('11peaI_ZJLq3nvgP0vasuQk', 'gemini-2.0-flash'),
    text('The temperature in Paris'),
    usage(169, 0),
    text(' is 30°C.\n'),
    finish('stop', 'STOP'),
    usage(79, 12),
  ],
  'gemini/text-after-function-response-2.5-flash.sse': () => [
    start('VL-Fao-BIOTbvdIPyZ3HiAQ', 'gemini-2.5-flash'),
    text('The weather in Berlin'),
    usage(233, 4),
    text(' is 15°C with a wind of 10 km/h.'),
    finish('stop', 'STOP'),
    usage(233, 21),
  ],
  'gemini/thinking-2.5-pro.sse': () => expectedFromPayloads('gemini/thinking-2.5-pro.sse'),
  'gemini/thoughts-token-accounting-2.5-flash.sse': () => [
    start('Bb-Fapr3DvG_nsEPhfTU6Ag', 'gemini-2.5-flash'),
    text("Let's think step-by-step:\n\n1.  You have the number 2.\n2.  You are adding another"),
    usage(13, 166, 137),
    text(' 2 to it.\n3.  If you count two items, and then count two more items, you will have a total of four items.\n\nSo, 2 + 2 = 4.'),
    finish('stop', 'STOP'),
    usage(13, 208, 137),
  ],
  // Two calls whose arguments stream as partialArgs; each call ends with `functionCall: {}`,
  // the STOP comes with the second one. Mid-stream usage has no counts (`{trafficType}` only).
  'gemini/vertex-streamed-function-call-args.jsonl': () => [
    start('dqHOab6xGLzWodAPkPuViA4', 'gemini-3.1-pro-preview'),
    signature(signatureIn('gemini/vertex-streamed-function-call-args.jsonl', 0)),
    call(0, 'call_1', 'getWeather'),
    args(0, '{"location":"Boston"}'),
    call(1, 'call_2', 'getWeather'),
    args(1, '{"location":"San Francisco"}'),
    finish('tool_calls', 'STOP'),
    usage(26, 155, 132),
  ],
  'gemini/vertex-text-2.5-flash.sse': () => [
    start('9b6FaoLCHNKPxN8P19vR2AE', 'gemini-2.5-flash'),
    text('1, 2, 3'),
    finish('stop', 'STOP'),
    usage(7, 32, 25),
  ],
};

/** What each recording assembles to: the non-stream message and what the ledger records. */
const assembled: Record<
  string,
  { text: string | null; reasoning: string | null; signed: boolean; calls: [string, string][]; finish: FinishReason; usage: Usage }
> = {
  'gemini/function-call-2.0-flash.sse': {
    text: null,
    reasoning: null,
    signed: false,
    calls: [['get_capital', '{"country":"France"}']],
    finish: 'tool_calls',
    usage: { inputTokens: 52, outputTokens: 5, source: 'provider' },
  },
  'gemini/function-call-thought-signature-2.5-flash.sse': {
    text: null,
    reasoning: null,
    signed: true,
    calls: [['weather', '{"latitude":"52.5200","longitude":"13.4050"}']],
    finish: 'tool_calls',
    usage: { inputTokens: 103, outputTokens: 73, reasoningTokens: 43, source: 'provider' },
  },
  'gemini/reasoning-gemini3-pro.jsonl': {
    text: 'There are **3** "r"s in strawberry.\n\nSt**r**awbe**rr**y',
    reasoning: null,
    signed: true,
    calls: [],
    finish: 'stop',
    usage: { inputTokens: 9, outputTokens: 325, reasoningTokens: 302, source: 'provider' },
  },
  'gemini/text-2.0-flash.sse': {
    text: 'The capital of France is Paris.\n',
    reasoning: null,
    signed: false,
    calls: [],
    finish: 'stop',
    usage: { inputTokens: 13, outputTokens: 8, source: 'provider' },
  },
  'gemini/text-2.5-flash.sse': {
    text: '1, 2, 3',
    reasoning: null,
    signed: false,
    calls: [],
    finish: 'stop',
    usage: { inputTokens: 8, outputTokens: 27, reasoningTokens: 20, source: 'provider' },
  },
  'gemini/text-after-function-response-2.0-flash.sse': {
    text: 'The temperature in Paris is 30°C.\n',
    reasoning: null,
    signed: false,
    calls: [],
    finish: 'stop',
    usage: { inputTokens: 79, outputTokens: 12, source: 'provider' },
  },
  'gemini/text-after-function-response-2.5-flash.sse': {
    text: 'The weather in Berlin is 15°C with a wind of 10 km/h.',
    reasoning: null,
    signed: false,
    calls: [],
    finish: 'stop',
    usage: { inputTokens: 233, outputTokens: 21, source: 'provider' },
  },
  'gemini/thinking-2.5-pro.sse': {
    text: null, // checked below against the payloads
    reasoning: null,
    signed: true,
    calls: [],
    finish: 'stop',
    usage: { inputTokens: 34, outputTokens: 1256, reasoningTokens: 787, source: 'provider' },
  },
  'gemini/thoughts-token-accounting-2.5-flash.sse': {
    text: "Let's think step-by-step:\n\n1.  You have the number 2.\n2.  You are adding another 2 to it.\n3.  If you count two items, and then count two more items, you will have a total of four items.\n\nSo, 2 + 2 = 4.",
    reasoning: null,
    signed: false,
    calls: [],
    finish: 'stop',
    usage: { inputTokens: 13, outputTokens: 208, reasoningTokens: 137, source: 'provider' },
  },
  'gemini/vertex-streamed-function-call-args.jsonl': {
    text: null,
    reasoning: null,
    signed: true,
    calls: [
      ['getWeather', '{"location":"Boston"}'],
      ['getWeather', '{"location":"San Francisco"}'],
    ],
    finish: 'tool_calls',
    usage: { inputTokens: 26, outputTokens: 155, reasoningTokens: 132, source: 'provider' },
  },
  'gemini/vertex-text-2.5-flash.sse': {
    text: '1, 2, 3',
    reasoning: null,
    signed: false,
    calls: [],
    finish: 'stop',
    usage: { inputTokens: 7, outputTokens: 32, reasoningTokens: 25, source: 'provider' },
  },
};

describe('google stream decoder on every recording', () => {
  const recordings = listFixtures('gemini', ['.sse', '.jsonl']);

  it('has an expectation for each recording in fixtures/gemini/', () => {
    assert.deepEqual(recordings, Object.keys(expected).sort());
    assert.deepEqual(recordings, Object.keys(assembled).sort());
  });

  for (const name of recordings) {
    it(`${name}: the whole event list`, () => {
      assert.deepEqual(decode([geminiStreamBody(name)]), expected[name]());
    });

    it(`${name}: assembles to the recorded message, calls, finish and usage`, () => {
      const want = assembled[name];
      const message = assemble(decode([geminiStreamBody(name)]));
      assert.equal(message.error, null);
      assert.equal(message.choices.length, 1);
      const c = message.choices[0];
      if (name !== 'gemini/thinking-2.5-pro.sse') {
        assert.equal(c.text, want.text);
        assert.equal(c.reasoning, want.reasoning);
      }
      assert.equal(c.reasoningSignature !== null, want.signed);
      assert.deepEqual(
        c.toolCalls.map((t) => [t.name, t.arguments]),
        want.calls,
      );
      assert.equal(new Set(c.toolCalls.map((t) => t.id)).size, c.toolCalls.length);
      assert.equal(c.finishReason, want.finish);
      assert.deepEqual(message.usage, want.usage);
    });

    it(`${name}: 20 random splits give the same events`, () => {
      const body = geminiStreamBody(name);
      const whole = decode([body]);
      for (let seed = 1; seed <= 20; seed++) {
        assert.deepEqual(decode(splitRandomly(body, seed, 48)), whole, `seed ${seed}`);
      }
    });
  }

  it('thinking-2.5-pro: thought summaries are reasoning, the answer is text, totals match', () => {
    const payloads = geminiPayloads('gemini/thinking-2.5-pro.sse');
    const parts = payloads.flatMap((p) => p.candidates[0].content.parts as { text: string; thought?: boolean }[]);
    const c = assemble(decode([geminiStreamBody('gemini/thinking-2.5-pro.sse')])).choices[0];
    assert.equal(
      c.reasoning,
      parts
        .filter((p) => p.thought)
        .map((p) => p.text)
        .join(''),
    );
    assert.equal(
      c.text,
      parts
        .filter((p) => !p.thought)
        .map((p) => p.text)
        .join(''),
    );
    assert.ok(c.reasoning?.startsWith('**Clarifying User Goals**'));
    // totalTokenCount = input + output: thoughts are counted as output.
    assert.equal(34 + 1256, payloads.at(-1)?.usageMetadata.totalTokenCount);
  });
});

describe('google stream decoder: errors in the stream', () => {
  const header = { responseId: 'r1', modelVersion: 'gemini-2.5-flash' };
  const candidate = (parts: unknown[], extra: Record<string, unknown> = {}) => ({
    ...header,
    candidates: [{ content: { role: 'model', parts }, ...extra }],
  });

  it('an error object before any output is an error event with the status it stands for', () => {
    const events = decodeText(frames({ error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } }));
    assert.equal(events.length, 1);
    const e = events[0];
    assert.equal(e.type, 'error');
    assert.equal(e.type === 'error' && e.error.status, 503);
    assert.equal(e.type === 'error' && e.error.message, 'The model is overloaded. Please try again later.');
    assert.equal(e.type === 'error' && e.error.code, 'upstream_overloaded');
  });

  it('an error after output ends the events; later frames are ignored', () => {
    const events = decodeText(
      frames(
        candidate([{ text: 'Hel' }]),
        { error: { message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } },
        candidate([{ text: 'lo' }], { finishReason: 'STOP' }),
      ),
    );
    assert.deepEqual(events.slice(0, 2), [start('r1', 'gemini-2.5-flash'), text('Hel')]);
    assert.equal(events.length, 3);
    const e = events[2];
    assert.equal(e.type === 'error' && e.error.status, 429);
    assert.equal(e.type === 'error' && e.error.message, 'Resource has been exhausted (e.g. check quota).');
  });

  it('a chunk that is not JSON, or a line that is not SSE, is a malformed-stream error', () => {
    const notJson = decodeText(`${frames(candidate([{ text: 'a' }]))}data: {"candidates":\r\n\r\n${frames(candidate([{ text: 'b' }]))}`);
    assert.deepEqual(notJson.slice(0, 2), [start('r1', 'gemini-2.5-flash'), text('a')]);
    assert.equal(notJson.length, 3);
    assert.equal(notJson[2].type === 'error' && notJson[2].error.code, 'upstream_malformed_stream');
    const notSse = decodeText('<html>bad gateway</html>\r\n');
    assert.equal(notSse.length, 1);
    assert.equal(notSse[0].type === 'error' && notSse[0].error.status, 502);
  });
});

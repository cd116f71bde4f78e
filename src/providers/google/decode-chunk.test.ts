import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { args, call, finish, text } from '../../../test/helpers/canonical-events.ts';
import { decodeChunks } from '../../../test/helpers/decode.ts';
import { GeminiChunkDecoder } from './decode-chunk.ts';

function decode(...chunks: object[]): CanonicalEvent[] {
  let n = 0;
  return decodeChunks(new GeminiChunkDecoder({ provider: 'google', newCallId: () => `call_${++n}` }), chunks);
}

const header = { responseId: 'r1', modelVersion: 'gemini-2.5-flash' };
const candidate = (parts: unknown[], extra: Record<string, unknown> = {}): object => ({
  ...header,
  candidates: [{ content: { parts: parts as never }, ...extra }],
});
const start: CanonicalEvent = { type: 'start', upstreamId: 'r1', upstreamModel: 'gemini-2.5-flash' };

describe('google chunk decoder', () => {
  it('a blocked prompt (no candidates) is an empty content_filter answer with its usage', () => {
    const events = decode({
      ...header,
      promptFeedback: { blockReason: 'PROHIBITED_CONTENT' },
      usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 },
    });
    assert.deepEqual(events, [
      start,
      finish('content_filter', 'PROHIBITED_CONTENT'),
      { type: 'usage', usage: { inputTokens: 8, outputTokens: 0, source: 'provider' } },
    ]);
  });

  it('maps MAX_TOKENS to length, safety stops to content_filter, the rest to stop', () => {
    assert.deepEqual(decode(candidate([{ text: 'x' }], { finishReason: 'MAX_TOKENS' })), [start, text('x'), finish('length', 'MAX_TOKENS')]);
    assert.deepEqual(decode(candidate([], { finishReason: 'SAFETY' })), [start, finish('content_filter', 'SAFETY')]);
    assert.deepEqual(decode(candidate([], { finishReason: 'MALFORMED_FUNCTION_CALL' })), [start, finish('stop', 'MALFORMED_FUNCTION_CALL')]);
  });

  it('parallel calls get one index each; a call without args is "{}"; an upstream id is kept', () => {
    const events = decode(
      candidate([{ functionCall: { name: 'now' } }, { functionCall: { id: 'fc-7', name: 'weather', args: { city: 'Paris', days: [1, 2] } } }]),
      candidate([], { finishReason: 'STOP' }),
    );
    assert.deepEqual(events, [
      start,
      call(0, 'call_1', 'now'),
      args(0, '{}'),
      call(1, 'fc-7', 'weather'),
      args(1, '{"city":"Paris","days":[1,2]}'),
      finish('tool_calls', 'STOP'),
    ]);
  });

  it('a thought part with its signature is one reasoning event; an empty thought is nothing', () => {
    const events = decode(
      candidate([{ text: 'Hmm.', thought: true, thoughtSignature: 'c2ln' }, { text: '', thought: true }, { text: 'Yes.' }], { finishReason: 'STOP' }),
    );
    assert.deepEqual(events, [start, { type: 'reasoning', choice: 0, text: 'Hmm.', signature: 'c2ln' }, text('Yes.'), finish('stop', 'STOP')]);
  });

  it('n > 1: each candidate is its own choice with its own finish', () => {
    const events = decode(
      {
        ...header,
        candidates: [
          { index: 0, content: { parts: [{ text: 'A' }] } },
          { index: 1, content: { parts: [{ functionCall: { name: 'f', args: {} } }] } },
        ],
      },
      {
        ...header,
        candidates: [
          { index: 1, content: { parts: [] }, finishReason: 'STOP' },
          { index: 0, content: { parts: [{ text: 'B' }] }, finishReason: 'STOP' },
        ],
      },
    );
    assert.deepEqual(events, [
      start,
      text('A', 0),
      call(0, 'call_1', 'f', 1),
      args(0, '{}', 1),
      finish('tool_calls', 'STOP', 1),
      text('B', 0),
      finish('stop', 'STOP', 0),
    ]);
  });

  it('usage is emitted when the running totals change, not on every chunk', () => {
    const u = { promptTokenCount: 5, candidatesTokenCount: 1, totalTokenCount: 6 };
    const events = decode(
      { ...candidate([{ text: 'a' }]), usageMetadata: u },
      { ...candidate([{ text: 'b' }]), usageMetadata: u },
      { ...candidate([{ text: 'c' }], { finishReason: 'STOP' }), usageMetadata: { ...u, candidatesTokenCount: 3, cachedContentTokenCount: 4 } },
    );
    assert.deepEqual(events, [
      start,
      text('a'),
      { type: 'usage', usage: { inputTokens: 5, outputTokens: 1, source: 'provider' } },
      text('b'),
      text('c'),
      finish('stop', 'STOP'),
      { type: 'usage', usage: { inputTokens: 5, outputTokens: 3, cachedInputTokens: 4, source: 'provider' } },
    ]);
  });

  it('log probabilities ride on the text of their chunk', () => {
    const events = decode(
      candidate([{ text: 'Hi' }], {
        logprobsResult: {
          chosenCandidates: [{ token: 'Hi', logProbability: -0.25 }],
          topCandidates: [
            {
              candidates: [
                { token: 'Hi', logProbability: -0.25 },
                { token: 'Hé', logProbability: -2 },
              ],
            },
          ],
        },
        finishReason: 'STOP',
      }),
    );
    assert.deepEqual(events, [
      start,
      {
        type: 'text',
        choice: 0,
        text: 'Hi',
        logprobs: [
          {
            token: 'Hi',
            logprob: -0.25,
            bytes: [72, 105],
            top_logprobs: [
              { token: 'Hi', logprob: -0.25, bytes: [72, 105] },
              { token: 'Hé', logprob: -2, bytes: [72, 195, 169] },
            ],
          },
        ],
      },
      finish('stop', 'STOP'),
    ]);
  });

  it('a streamed call the upstream never closed still gets its arguments at the end', () => {
    const events = decode(
      candidate([
        { functionCall: { name: 'search', willContinue: true, partialArgs: [{ jsonPath: '$.q', stringValue: 'sluice ', willContinue: true }] } },
      ]),
      candidate([
        {
          functionCall: {
            partialArgs: [
              { jsonPath: '$.q', stringValue: 'gateway' },
              { jsonPath: '$.limit', numberValue: 3 },
              { jsonPath: '$.tags[0]', stringValue: 'a' },
            ],
            willContinue: true,
          },
        },
      ]),
    );
    assert.deepEqual(events, [start, call(0, 'call_1', 'search'), args(0, '{"q":"sluice gateway","limit":3,"tags":["a"]}')]);
  });

  it('a streamed call is closed by the finish of its candidate, before the finish', () => {
    const events = decode(
      candidate([{ functionCall: { name: 'f', willContinue: true } }]),
      candidate([{ functionCall: { partialArgs: [{ jsonPath: '$.ok', boolValue: true }], willContinue: true } }], { finishReason: 'STOP' }),
    );
    assert.deepEqual(events, [start, call(0, 'call_1', 'f'), args(0, '{"ok":true}'), finish('tool_calls', 'STOP')]);
  });

  it('a streamed argument with an unusable path fails the response, and nothing follows', () => {
    const decoder = new GeminiChunkDecoder({ provider: 'google', newCallId: () => 'call_1' });
    const out: CanonicalEvent[] = [];
    decoder.decode(candidate([{ functionCall: { name: 'f', willContinue: true, partialArgs: [{ jsonPath: 'location', stringValue: 'x' }] } }]), out);
    assert.equal(decoder.failed, true);
    decoder.decode(candidate([{ text: 'more' }], { finishReason: 'STOP' }), out);
    decoder.end(out);
    assert.deepEqual(out.slice(0, 2), [start, call(0, 'call_1', 'f')]);
    assert.equal(out.length, 3);
    const e = out[2];
    assert.equal(e.type === 'error' && e.error.message, 'The google stream could not be decoded: unsupported function-call argument path "location"');
  });
});

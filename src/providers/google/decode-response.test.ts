import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assemble } from '../../protocol/canonical/assemble.ts';
import { decodeAll } from '../../../test/helpers/decode.ts';
import { listFixtures } from '../../../test/helpers/fixtures.ts';
import { geminiPayloads, geminiResponseOf, geminiStreamBody } from '../../../test/helpers/gemini-fixtures.ts';
import { decodeGeminiResponse } from './decode-response.ts';
import { createGeminiStreamDecoder } from './decode-stream.ts';

const counter = () => {
  let n = 0;
  return () => `call_${++n}`;
};
const decodeBody = (body: unknown) => decodeGeminiResponse(body, { provider: 'google', newCallId: counter() });

const decodeStream = (body: Buffer) => decodeAll(createGeminiStreamDecoder({ provider: 'google', newCallId: counter() }), [body]);

describe('google non-stream decoder', () => {
  it('a generateContent answer with thoughts, a signed call and usage', () => {
    const events = decodeBody({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'The user wants the weather.', thought: true },
              { functionCall: { name: 'weather', args: { city: 'Oslo' } }, thoughtSignature: 'c2lnbmF0dXJl' },
            ],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 40, cachedContentTokenCount: 32, candidatesTokenCount: 9, thoughtsTokenCount: 21, totalTokenCount: 70 },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'abc',
    });
    assert.deepEqual(events, [
      { type: 'start', upstreamId: 'abc', upstreamModel: 'gemini-2.5-flash' },
      { type: 'reasoning', choice: 0, text: 'The user wants the weather.' },
      { type: 'reasoning', choice: 0, text: '', signature: 'c2lnbmF0dXJl' },
      { type: 'tool-call-start', choice: 0, index: 0, id: 'call_1', name: 'weather' },
      { type: 'tool-call-delta', choice: 0, index: 0, arguments: '{"city":"Oslo"}' },
      { type: 'finish', choice: 0, reason: 'tool_calls', rawReason: 'STOP' },
      { type: 'usage', usage: { inputTokens: 40, outputTokens: 30, cachedInputTokens: 32, reasoningTokens: 21, source: 'provider' } },
    ]);
  });

  it('an error object in a 200 body is an error event', () => {
    const events = decodeBody({ error: { code: 400, message: 'Invalid JSON payload received.', status: 'INVALID_ARGUMENT' } });
    assert.equal(events.length, 1);
    assert.equal(events[0].type === 'error' && events[0].error.status, 400);
    assert.equal(events[0].type === 'error' && events[0].error.message, 'Invalid JSON payload received.');
  });

  it('a body that is not a response object is a malformed-response error', () => {
    for (const body of [null, 'text', [{ candidates: [] }, 3]]) {
      const events = decodeBody(body);
      const last = events.at(-1);
      assert.equal(last?.type === 'error' && last.error.code, 'upstream_malformed_stream', JSON.stringify(body));
    }
  });
});

describe('google non-stream decoder on every recording', () => {
  for (const name of listFixtures('gemini', ['.sse', '.jsonl'])) {
    it(`${name}: the JSON-array form decodes exactly like the stream`, () => {
      assert.deepEqual(decodeBody(geminiPayloads(name)), decodeStream(geminiStreamBody(name)));
    });

    it(`${name}: the merged generateContent answer assembles like the stream`, () => {
      const streamed = assemble(decodeStream(geminiStreamBody(name)));
      const whole = assemble(decodeBody(geminiResponseOf(name)));
      assert.deepEqual(whole, streamed);
    });
  }
});

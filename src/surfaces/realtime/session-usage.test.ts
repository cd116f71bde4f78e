import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addResponse, NO_SESSION_USAGE, responseCreateId, responseDoneUsage } from './session-usage.ts';

const frame = (event: unknown) => Buffer.from(JSON.stringify(event));

const done = frame({
  type: 'response.done',
  event_id: 'event_1',
  response: {
    id: 'resp_1',
    usage: {
      total_tokens: 300,
      input_tokens: 200,
      output_tokens: 100,
      input_token_details: { cached_tokens: 64, text_tokens: 120, audio_tokens: 80 },
      output_token_details: { text_tokens: 30, audio_tokens: 70 },
    },
  },
});

test("a response.done's usage: input, output, cached, audio on both sides", () => {
  assert.deepEqual(responseDoneUsage(done), {
    inputTokens: 200,
    outputTokens: 100,
    cachedInputTokens: 64,
    audioInputTokens: 80,
    audioOutputTokens: 70,
    source: 'provider',
  });
});

test('other events are not parsed as usage, even when their text mentions response.done', () => {
  assert.equal(responseDoneUsage(frame({ type: 'response.output_audio.delta', delta: 'AAAA' })), undefined);
  assert.equal(responseDoneUsage(frame({ type: 'response.output_text.delta', delta: 'see response.done' })), undefined);
  assert.equal(responseDoneUsage(Buffer.from('response.done, not JSON')), undefined);
});

test('a response.done without usage, or with counts that are not counts, reads 0', () => {
  assert.equal(responseDoneUsage(frame({ type: 'response.done', response: {} }))?.inputTokens, 0);
  assert.equal(responseDoneUsage(frame({ type: 'response.done', response: { usage: { input_tokens: '12', output_tokens: 3 } } }))?.inputTokens, 0);
});

test("a session's usage sums its responses", () => {
  const one = responseDoneUsage(done)!;
  const sum = addResponse(addResponse(NO_SESSION_USAGE, one), one);
  assert.deepEqual(sum, {
    inputTokens: 400,
    outputTokens: 200,
    cachedInputTokens: 128,
    audioInputTokens: 160,
    audioOutputTokens: 140,
    responses: 2,
  });
});

test("a response.create's event id; other client events are not one", () => {
  assert.equal(responseCreateId(frame({ type: 'response.create', event_id: 'ev_9' })), 'ev_9');
  assert.equal(responseCreateId(frame({ type: 'response.create' })), null);
  assert.equal(responseCreateId(frame({ type: 'conversation.item.create', item: { text: 'response.create' } })), undefined);
  assert.equal(responseCreateId(frame({ type: 'input_audio_buffer.append', audio: 'AAAA' })), undefined);
});

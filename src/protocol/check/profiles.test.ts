import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderChat, renderResponses } from '../../../fuzz/render-stream.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalEvent } from '../canonical/events.ts';
import { STREAM_PROFILE_NAMES } from '../../config/stream-profile-names.ts';
import { STREAM_PROFILES } from '../stream-profiles.ts';
import { checkStream } from './check-stream.ts';

/** Text, a tool call, the finish and the usage: what every surface and profile renders. */
const answer: CanonicalEvent[] = [
  { type: 'start', systemFingerprint: 'fp' },
  { type: 'text', choice: 0, text: 'Let me look.' },
  { type: 'tool-call-start', choice: 0, index: 0, id: 'call_1', name: 'get_weather' },
  { type: 'tool-call-delta', choice: 0, index: 0, arguments: '{"city":"Paris"}' },
  { type: 'finish', choice: 0, reason: 'tool_calls' },
  { type: 'usage', usage: { inputTokens: 9, outputTokens: 12, source: 'provider' } },
];

const failure = new GatewayError({
  code: 'upstream_error',
  status: 502,
  type: 'upstream_error',
  upstreamType: 'stream_error',
  message: 'upstream timeout',
});
/** The same answer cut short by an upstream error after its first text. */
const failed: CanonicalEvent[] = [...answer.slice(0, 2), { type: 'error', error: failure }];

const violations = (body: string) => checkStream(body).violations.map((v) => `${v.frame ?? 'end'}:${v.rule}: ${v.message}`);

// sluice check reads every profile's streams as conforming: each one's choices (usage on the finish
// chunk, `"usage":null`, `content: null`, `event: error`, the upstream's error type, the accounting
// events, zero usage on response.created, call_id on argument deltas, response.failed alone) are
// among what the stream contract allows.
describe('sluice check and the stream profiles', () => {
  for (const name of STREAM_PROFILE_NAMES) {
    const chat = STREAM_PROFILES[name].chat;
    for (const includeUsage of [false, true]) {
      it(`${name}: a chat stream, ${includeUsage ? 'with' : 'without'} usage, finished or failed, conforms`, () => {
        const options = { id: 'chatcmpl-1', created: 1, model: 'up/m', provider: 'up', includeUsage, usageExtensions: false, stream: chat };
        assert.deepEqual(violations(renderChat(answer, options).body), []);
        assert.deepEqual(violations(renderChat(failed, options).body), []);
      });
    }
    it(`${name}: a Responses stream, finished or failed, conforms`, () => {
      const choices = STREAM_PROFILES[name].responses;
      assert.deepEqual(violations(renderResponses(answer, choices).body), []);
      assert.deepEqual(violations(renderResponses(failed, choices).body), []);
    });
  }
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assemble } from '../src/protocol/canonical/assemble.ts';
import { createOpenAICompatibleFrameDecoder } from '../src/providers/openai-compatible/decode-stream.ts';
import { createSseStreamDecoder } from '../src/providers/sse-decoder.ts';
import { SseProbe } from './sse-probe.ts';
import { EXPECTED_TEXT, paceFromModel, scriptedStream, TOKENS, tokensFromModel, UNARY_TEXT, unaryCompletion } from './upstream-frames.ts';

describe('the fake upstream streams', () => {
  it('is a Chat Completions stream sluice decodes to 20 text deltas, stop and usage', () => {
    const s = scriptedStream('openai', 'bench-fast');
    const decoder = createSseStreamDecoder('up', createOpenAICompatibleFrameDecoder({ provider: 'up', splitThinkTags: false }));
    const events = [s.head, ...s.tokens, s.tail].flatMap((piece) => decoder.push(piece)).concat(decoder.end());
    assert.deepEqual(
      events.filter((e) => e.type === 'text').map((e) => (e.type === 'text' ? e.text : '')),
      [...TOKENS],
    );
    const message = assemble(events);
    assert.equal(message.error, null);
    assert.equal(message.choices[0].text, EXPECTED_TEXT);
    assert.equal(message.choices[0].finishReason, 'stop');
    assert.equal(message.usage?.inputTokens, 24);
    assert.equal(message.usage?.outputTokens, 20);
    assert.equal(message.start?.upstreamModel, 'bench-fast');
  });

  it('is an Anthropic Messages stream with the event sequence of a recorded one', () => {
    const s = scriptedStream('anthropic', 'bench-pace-20');
    const body = Buffer.concat([s.head, ...s.tokens, s.tail]).toString('utf8');
    const events = [...body.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    assert.deepEqual(events, [
      'message_start',
      'content_block_start',
      ...TOKENS.map(() => 'content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const probe = new SseProbe('anthropic', true);
    probe.push(body);
    assert.deepEqual([probe.text, probe.contentFrames, probe.usage, probe.complete], [EXPECTED_TEXT, 20, true, true]);
  });

  it('reads the pacing and the length from the model name', () => {
    assert.deepEqual(['bench-pace-20', 'bench-pace-5', 'bench-fast', 'gpt-4o'].map(paceFromModel), [20, 5, 0, 0]);
    assert.deepEqual(['bench-pace-1000-tokens-150', 'bench-pace-20'].map(tokensFromModel), [150, undefined]);
    assert.equal(paceFromModel('bench-pace-1000-tokens-150'), 1000);
  });

  it('answers the unary mode with a 256-byte chat.completion, as the public gateway boards do', () => {
    const body = unaryCompletion('bench-fast');
    assert.equal(body.length, 256);
    const parsed = JSON.parse(body.toString('utf8')) as { choices: { message: { content: string } }[]; model: string };
    assert.deepEqual([parsed.choices[0].message.content, parsed.model], [UNARY_TEXT, 'bench-fast']);
  });
});

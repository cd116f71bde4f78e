import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chatStream, DONE, responsesBody, responsesEvents, text, violations } from '../../../test/helpers/check-streams.ts';

describe('rules of both surfaces', () => {
  it('an empty body is reported', () => {
    assert.deepEqual(violations(''), ['end:stream/empty']);
    assert.deepEqual(violations(': heartbeat\n\n'), ['end:stream/empty']);
  });

  it('chat: the stream must end with [DONE]', () => {
    assert.deepEqual(violations(chatStream().slice(0, -1)), ['end:done/missing']);
  });

  it('Responses: [DONE] is optional (OpenAI sends none) but nothing may follow it', () => {
    assert.deepEqual(violations(responsesBody(responsesEvents(), false)), []);
    assert.deepEqual(violations(responsesBody(responsesEvents()) + DONE), ['11:done/after']);
  });

  it('nothing after [DONE]', () => {
    assert.deepEqual(violations([...chatStream(), text('late')]), ['7:done/after', '7:chat/after-finish', '7:chat/usage-after-finish']);
  });

  it('data that is neither a JSON object nor [DONE]', () => {
    const frames = chatStream();
    frames.splice(2, 0, 'data: {"id":\n\n', 'data: [1,2]\n\n');
    assert.deepEqual(violations(frames), ['3:sse/json', '4:sse/json']);
  });

  it('`id:` lines never repeat', () => {
    const frames = chatStream().map((f, i) => `id: ${i === 3 ? 2 : i}\n${f}`);
    assert.deepEqual(violations(frames), ['4:sse/id-unique']);
  });
});

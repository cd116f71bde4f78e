import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chatStream, data, DONE, errorFrame, named, role, text, usage, violations } from '../../../test/helpers/check-streams.ts';

describe('chat frames and errors', () => {
  it('a failed stream: usage so far, the error frame, [DONE] (either error style)', () => {
    assert.deepEqual(violations([role(), text('Hel'), usage(), errorFrame, DONE]), []);
    const event = named('error', { error: { message: 'Request timed out', type: 'timeout_error', code: 'timeout' } });
    assert.deepEqual(violations([role(), text('Hel'), event, DONE]), []);
  });

  it('an error frame not followed by [DONE]', () => {
    assert.deepEqual(violations([role(), errorFrame, text('more'), DONE]), ['3:chat/error-then-done']);
    assert.deepEqual(violations([role(), text('Hel'), errorFrame]), ['3:chat/error-then-done', 'end:done/missing']);
  });

  it('an error frame must say what went wrong', () => {
    assert.deepEqual(violations([role(), data({ error: { type: 'server_error' } }), DONE]), ['2:chat/frame-kind']);
  });

  it('vendor x_ events pass, anything else unknown is reported', () => {
    const frames = chatStream();
    frames.splice(2, 0, data({ type: 'x_research.searching', name: 'web_search' }), data({ hello: 'world' }));
    assert.deepEqual(violations(frames), ['4:chat/frame-kind']);
  });

  it('the accounting profile: usage_start, flat content frames, finish, usage_final, response.done', () => {
    const flat = (type: string, d: string, c: Record<string, unknown>) => ({ type, data: d, provider: 'openai', choices: [c] });
    const stream = [
      named('usage_start', { type: 'usage_start', request_id: 'r', provider: 'openai', model: 'm', input_tokens: 3 }),
      data(flat('content', '', { index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null })),
      data(flat('content', 'Hi', { index: 0, delta: { content: 'Hi' }, finish_reason: null })),
      data({ type: 'finish', provider: 'openai', finish_reason: 'stop', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
      named('usage_final', { type: 'usage_final', request_id: 'r', input_tokens: 3, output_tokens: 1, cost_usd: 0 }),
      data({ type: 'response.done', response: { id: 'r', status: 'completed' } }),
      DONE,
    ];
    assert.deepEqual(violations(stream), []);
    const failed = [...stream.slice(0, 3), data({ type: 'error', data: 'Provider returned 502', provider: 'openai' }), DONE];
    assert.deepEqual(violations(failed), []);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseChatRequest } from '../../surfaces/chat/parse-request.ts';
import { chatToCanonical } from '../../surfaces/chat/to-canonical.ts';
import { buildOpenAICompatibleRequest } from './build-request.ts';

const target = { baseUrl: 'http://127.0.0.1:9/v1/', apiKey: 'sk-up', headers: { 'x-team': 'a' }, streamOptions: true };
const canonical = (body: Record<string, unknown>) =>
  chatToCanonical(parseChatRequest({ model: 'up/m', messages: [{ role: 'user', content: 'hi' }], ...body }));
const sent = (body: Record<string, unknown>, stream: boolean, options = target) =>
  JSON.parse(buildOpenAICompatibleRequest(canonical(body), 'upstream-m', stream, options).body as string);

describe('openai-compatible request', () => {
  it('streams to {base}/chat/completions with the key, the config headers and the upstream model', () => {
    const built = buildOpenAICompatibleRequest(canonical({ stream: true }), 'upstream-m', true, target);
    assert.equal(built.url, 'http://127.0.0.1:9/v1/chat/completions');
    assert.deepEqual(built.headers, {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'x-team': 'a',
      authorization: 'Bearer sk-up',
    });
    assert.deepEqual(JSON.parse(built.body as string), {
      model: 'upstream-m',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    });
  });

  it("always asks for usage, keeping the client's other stream_options", () => {
    const body = sent({ stream: true, stream_options: { include_usage: false, include_obfuscation: false } }, true);
    assert.deepEqual(body.stream_options, { include_usage: true, include_obfuscation: false });
  });

  it('sends no stream_options to an upstream that does not take them, and neither stream nor stream_options when not streaming', () => {
    const body = sent({ stream: true, stream_options: { include_usage: true } }, true, { ...target, streamOptions: false });
    assert.equal(body.stream, true);
    assert.equal('stream_options' in body, false);
    const complete = sent({ provider: { sort: 'price' } }, false);
    assert.deepEqual(complete, { model: 'upstream-m', messages: [{ role: 'user', content: 'hi' }], provider: { sort: 'price' } });
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeChunks } from '../../../test/helpers/decode.ts';
import { ChunkDecoder } from './decode-chunk.ts';

/** All events of a decoder fed these chunks, `start` included. */
const decodeAll = (chunks: unknown[]) => decodeChunks(new ChunkDecoder({ provider: 'test', splitThinkTags: false }), chunks);
/** The same without `start`. */
const decode = (chunks: object[]) => decodeAll(chunks).filter((e) => e.type !== 'start');

const delta = (d: Record<string, unknown>, finish: string | null = null): object => ({
  choices: [{ index: 0, delta: d, finish_reason: finish }],
});

// No recording has these shapes (the recorded Mistral call carries an index), so they are
// written out here from the providers' documented behaviour.
describe('tool calls the recordings do not show', () => {
  it('joins calls without `index` by id, and id-less continuations to the last call (Mistral style)', () => {
    assert.deepEqual(
      decode([
        delta({ tool_calls: [{ id: 'a1', function: { name: 'weather', arguments: '{"city":' } }] }),
        delta({ tool_calls: [{ function: { arguments: '"Paris"}' } }] }),
        delta({ tool_calls: [{ id: 'b2', function: { name: 'time', arguments: '{}' } }] }),
        delta({}, 'tool_calls'),
      ]),
      [
        { type: 'tool-call-start', choice: 0, index: 0, id: 'a1', name: 'weather' },
        { type: 'tool-call-delta', choice: 0, index: 0, arguments: '{"city":' },
        { type: 'tool-call-delta', choice: 0, index: 0, arguments: '"Paris"}' },
        { type: 'tool-call-start', choice: 0, index: 1, id: 'b2', name: 'time' },
        { type: 'tool-call-delta', choice: 0, index: 1, arguments: '{}' },
        { type: 'finish', choice: 0, reason: 'tool_calls', rawReason: 'tool_calls' },
      ],
    );
  });

  it('splits parallel calls an upstream sent all with index 0 but distinct ids', () => {
    const events = decode([
      delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: '{"n":1}' } }] }),
      delta({ tool_calls: [{ index: 0, id: 'c2', function: { name: 'f', arguments: '{"n":2}' } }] }),
      delta({}, 'tool_calls'),
    ]);
    assert.deepEqual(
      events.filter((e) => e.type === 'tool-call-start').map((e) => [e.index, e.id]),
      [
        [0, 'c1'],
        [1, 'c2'],
      ],
    );
  });

  it('reports tool_calls when a server finishes a tool-calling turn with "stop"', () => {
    const events = decode([delta({ tool_calls: [{ index: 0, id: 'x', function: { name: 'f', arguments: '{}' } }] }), delta({}, 'stop')]);
    assert.deepEqual(events.at(-1), { type: 'finish', choice: 0, reason: 'tool_calls', rawReason: 'stop' });
  });

  it('makes an id only when the upstream sent none', () => {
    const [start] = decode([delta({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '{}' } }] })]);
    assert.equal(start.type, 'tool-call-start');
    assert.match((start as { id: string }).id, /^call_[\w-]{16}$/);
  });
});

describe('regression: an upstream could inject JSON through choices[].index', () => {
  it('a choice index that is not an integer from 0 to 127 fails the stream, naming the field', () => {
    for (const index of ['0,"delta":{}},{"index":1', 'abc', {}, [], Number.POSITIVE_INFINITY, -1, 0.5, 128, true]) {
      const events = decodeAll([{ choices: [{ index, delta: { content: 'x' } }] }, { choices: [{ index: 0, delta: { content: 'y' } }] }]);
      assert.equal(events.length, 1, JSON.stringify(index));
      const [event] = events;
      assert.equal(event.type, 'error');
      if (event.type !== 'error') return;
      assert.equal(event.error.code, 'upstream_malformed_stream');
      assert.match(event.error.message, /^The test stream could not be decoded: chunk field choices\[0\]\.index: /);
    }
  });

  it('text, ids, names, arguments, finish reasons and logprobs of the wrong type fail the stream too', () => {
    const bad: [string, unknown][] = [
      ['choices[0].delta.content', { content: { text: 'x' } }],
      ['choices[0].delta.reasoning_content', { reasoning_content: ['x'] }],
      ['choices[0].delta.refusal', { refusal: 1 }],
      ['choices[0].delta.tool_calls[0].id', { tool_calls: [{ index: 0, id: {}, function: { name: 'f' } }] }],
      ['choices[0].delta.tool_calls[0].function.name', { tool_calls: [{ index: 0, function: { name: ['f'] } }] }],
      ['choices[0].delta.tool_calls[0].function.arguments', { tool_calls: [{ index: 0, function: { arguments: { a: 1 } } }] }],
      ['choices[0].delta.tool_calls[0].index', { tool_calls: [{ index: -1 }] }],
      ['choices[0].delta.tool_calls[0]', { tool_calls: [null] }],
      ['choices[0].delta.annotations[0].url_citation.url', { annotations: [{ type: 'url_citation', url_citation: { url: 5 } }] }],
    ];
    for (const [field, delta] of bad) {
      const [event, ...rest] = decodeAll([{ choices: [{ index: 0, delta }] }]);
      assert.equal(rest.length, 0, field);
      assert.ok(event.type === 'error' && event.error.message.includes(`chunk field ${field}:`), `${field}: ${JSON.stringify(event)}`);
    }
    const [finish] = decodeAll([{ choices: [{ index: 0, finish_reason: { stop: true } }] }]);
    assert.ok(finish.type === 'error' && finish.error.message.includes('choices[0].finish_reason'));
    const [logprobs] = decodeAll([{ choices: [{ index: 0, delta: { content: 'x' }, logprobs: { content: [{ token: 'x', logprob: '-1' }] } }] }]);
    assert.ok(logprobs.type === 'error' && logprobs.error.message.includes('choices[0].logprobs.content[0].logprob'));
  });

  it('echoed metadata of the wrong type (id, model, system_fingerprint, service_tier) is dropped, not fatal', () => {
    const [start, text] = decodeAll([
      { id: {}, model: ['m'], system_fingerprint: 5, service_tier: { tier: 'x' }, choices: [{ index: 0, delta: { content: 'x' } }] },
    ]);
    assert.deepEqual(start, { type: 'start', upstreamId: undefined, upstreamModel: undefined, systemFingerprint: null, serviceTier: null });
    assert.deepEqual(text, { type: 'text', choice: 0, text: 'x', logprobs: undefined });
  });

  it('logprobs reach the client with only the documented keys, bytes and top_logprobs filled in when left out', () => {
    const [, text] = decodeAll([
      { choices: [{ index: 0, delta: { content: 'x' }, logprobs: { content: [{ token: 'x', logprob: -1, extra: '"},{' }] } }] },
    ]);
    assert.deepEqual(text, { type: 'text', choice: 0, text: 'x', logprobs: [{ token: 'x', logprob: -1, bytes: null, top_logprobs: [] }] });
  });

  it('a finish_reason naming an Object.prototype key is a natural stop', () => {
    for (const reason of ['constructor', '__proto__', 'toString']) {
      const events = decodeAll([{ choices: [{ index: 0, delta: {}, finish_reason: reason }] }]);
      assert.deepEqual(events.at(-1), { type: 'finish', choice: 0, reason: 'stop', rawReason: reason });
    }
  });
});

// Hostile upstreams (the stream conformance tap): a call needs a name to be answered, and an id to match its result.
describe('tool calls without an id or a name', () => {
  it('makes up an id for a call whose first delta has an empty one', () => {
    const [start] = decode([delta({ tool_calls: [{ index: 0, id: '', function: { name: 'f', arguments: '' } }] })]);
    assert.equal(start?.type, 'tool-call-start');
    assert.match((start as { id: string }).id, /^call_[\w-]{16}$/);
  });

  it('ends the stream as malformed on a first delta with an empty or missing name, and reads nothing after it', () => {
    for (const fn of [{ name: '', arguments: '' }, { arguments: '{}' }]) {
      const events = decode([delta({ tool_calls: [{ index: 0, id: 'call_1', function: fn }] }, 'tool_calls'), delta({ content: 'ignored' })]);
      assert.deepEqual(
        events.map((e) => (e.type === 'error' ? e.error.code : e.type)),
        ['upstream_malformed_stream'],
      );
    }
  });
});

describe('finish_reason "error" (OpenRouter: a generation that failed)', () => {
  it('is a failure, not a stop: an upstream finish_reason "error" was billed as a success', () => {
    const events = decode([delta({ content: 'Half an' }), delta({}, 'error')]);
    assert.deepEqual(
      events.map((e) => (e.type === 'error' ? `error ${e.error.code}` : e.type)),
      ['text', 'error upstream_error'],
    );
    const error = events.at(-1);
    assert.ok(error?.type === 'error');
    assert.equal(error.error.message, 'test ended the generation with finish_reason "error".');
    // The upstream answered the stream with a 200: that is its status, recorded.
    assert.deepEqual([error.error.status, error.error.upstreamStatus], [502, 200]);
  });

  it("takes the chunk's own error object when it carries one, once", () => {
    const events = decode([
      delta({ content: 'Half' }),
      { error: { code: 'server_error', message: 'Provider disconnected' }, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }] },
    ]);
    assert.deepEqual(
      events.map((e) => (e.type === 'error' ? `error ${e.error.message} ${e.error.upstreamCode}` : e.type)),
      ['text', 'error Provider disconnected server_error'],
    );
  });
});

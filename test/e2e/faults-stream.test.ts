import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { APIError } from 'openai';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { parseSse, rawStream, startGateway, upstreamConfig, useUpstreamGateway } from '../helpers/gateway.ts';
import { chatRequest, contentOf, expectErrorThenDone, groqErrorFrame, recordedFrames, recordedText, streamRequest, until } from './faults-support.ts';

const frames = recordedFrames();
// role, then the first two content deltas ("The", " capital").
const head = frames.slice(0, 3);
const headText = recordedText(head);

describe('stream faults: the upstream breaks (heartbeat off)', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: {
      ...upstreamConfig(url),
      stream: { heartbeat_s: 0, idle_timeout_s: 0.3, deadline_s: 5 },
    },
  }));

  it('upstream reset mid-stream: error frame then [DONE], and the SDK throws', async () => {
    upstream.reply({ pieces: head, after: 'reset' });
    const { status, text } = await rawStream(gw.url, chatRequest());
    assert.equal(status, 200);
    const { chunks, error } = expectErrorThenDone(text, 'upstream_connection_error');
    assert.equal(contentOf(chunks), headText);
    assert.equal(error.type, 'upstream_error');

    upstream.reply({ pieces: head, after: 'reset' });
    const stream = await gw.client.chat.completions.create(streamRequest);
    let seen = '';
    await assert.rejects(
      (async () => {
        for await (const chunk of stream) {
          seen += chunk.choices[0]?.delta.content ?? '';
        }
      })(),
      (err: unknown) => err instanceof APIError && err.code === 'upstream_connection_error',
    );
    assert.equal(seen, headText);
  });

  it('truncated stream (no finish_reason, no [DONE]): upstream_stream_truncated', async () => {
    upstream.reply({ pieces: frames.slice(0, 5) });
    const { status, text } = await rawStream(gw.url, chatRequest());
    assert.equal(status, 200);
    const { chunks, error } = expectErrorThenDone(text, 'upstream_stream_truncated');
    assert.equal(contentOf(chunks), recordedText(frames.slice(0, 5)));
    assert.ok(chunks.every((c) => c.choices[0].finish_reason === null));
    assert.equal(error.type, 'upstream_error');
  });

  it('a malformed JSON chunk mid-stream fails the stream and closes the upstream', async () => {
    const closed = upstream.closedEarly;
    upstream.reply({
      pieces: [...head, 'data: {"id":"chatcmpl-x","choices":[{"delta":{"content":"br\n\n', ...frames.slice(3)],
      after: 'hang',
    });
    const { status, text } = await rawStream(gw.url, chatRequest());
    assert.equal(status, 200);
    const { chunks, error } = expectErrorThenDone(text, 'upstream_malformed_stream');
    // Nothing after the bad chunk reaches the client: no silent skip past it.
    assert.equal(contentOf(chunks), headText);
    assert.match(error.message, /not JSON/);
    await upstream.waitForEarlyClose(2000, closed + 1);
  });

  for (const [name, line] of [
    ['a bare JSON line', '{"oops":1}\n'],
    ['an HTML page', '<html><body><h1>502 Bad Gateway</h1></body></html>\n'],
  ] as const) {
    it(`${name} mid-stream is not SSE: error frame then [DONE], never dropped`, async () => {
      upstream.reply({ pieces: [...head, line, ...frames.slice(3)] });
      const { status, text } = await rawStream(gw.url, chatRequest());
      assert.equal(status, 200);
      const { chunks, error } = expectErrorThenDone(text, 'upstream_malformed_stream');
      assert.equal(contentOf(chunks), headText);
      assert.match(error.message, /not server-sent events/);
    });
  }

  it('a 200 whose body is an HTML page, before any output: HTTP 502', async () => {
    upstream.reply({ body: '<html><body><h1>502 Bad Gateway</h1></body></html>\n' });
    const res = await rawStream(gw.url, chatRequest());
    assert.equal(res.status, 502);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.equal(JSON.parse(res.text).error.code, 'upstream_malformed_stream');
  });

  it('upstream hang before any byte: idle timeout becomes HTTP 504 before the stream', async () => {
    const closed = upstream.closedEarly;
    upstream.reply({ after: 'hang' });
    const res = await rawStream(gw.url, chatRequest());
    assert.equal(res.status, 504);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.deepEqual(JSON.parse(res.text), {
      error: {
        message: 'No data from the upstream for 0.3s; the stream was ended.',
        type: 'stream_idle_timeout',
        param: null,
        code: 'stream_idle_timeout',
      },
    });
    await upstream.waitForEarlyClose(2000, closed + 1);
  });

  it('upstream hang mid-stream: stream_idle_timeout frame then [DONE]', async () => {
    const closed = upstream.closedEarly;
    upstream.reply({ pieces: head, after: 'hang' });
    const { status, text } = await rawStream(gw.url, chatRequest());
    assert.equal(status, 200);
    const { chunks, error } = expectErrorThenDone(text, 'stream_idle_timeout');
    assert.equal(contentOf(chunks), headText);
    assert.equal(error.type, 'stream_idle_timeout');
    await upstream.waitForEarlyClose(2000, closed + 1);
  });

  it('an upstream `event: error` as the first frame becomes an HTTP 400, not a 200 stream', async () => {
    upstream.reply({ body: groqErrorFrame() });
    const res = await rawStream(gw.url, chatRequest());
    assert.equal(res.status, 400);
    const body = JSON.parse(res.text);
    assert.deepEqual([body.error.code, body.error.upstream?.code], ['invalid_request', 'tool_use_failed']);
    assert.equal(body.error.type, 'invalid_request_error');
    assert.match(body.error.message, /^Tool call validation failed/);

    upstream.reply({ body: groqErrorFrame() });
    await assert.rejects(gw.client.chat.completions.create(streamRequest), (err: unknown) => {
      return err instanceof APIError && err.status === 400 && err.code === 'invalid_request';
    });
  });

  it('client disconnect before the first token aborts the upstream request', async () => {
    const closed = upstream.closedEarly;
    const seen = upstream.requests.length;
    upstream.reply({ after: 'hang' });
    const controller = new AbortController();
    const pending = fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chatRequest()),
      signal: controller.signal,
    });
    await until(() => upstream.requests.length > seen, 'the upstream request');
    controller.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    await upstream.waitForEarlyClose(2000, closed + 1);
  });

  it('client disconnect after the first token aborts the upstream request', async () => {
    const closed = upstream.closedEarly;
    upstream.reply({ pieces: head, after: 'hang' });
    const stream = await gw.client.chat.completions.create(streamRequest);
    let first = '';
    for await (const chunk of stream) {
      first = chunk.choices[0]?.delta.content ?? '';
      if (first) break; // leaving the loop aborts the SDK's request
    }
    assert.equal(first, recordedText(frames.slice(1, 2)));
    await upstream.waitForEarlyClose(2000, closed + 1);
  });
});

describe('stream faults: heartbeats, idle timeout and deadline', () => {
  let upstream: FakeUpstream;
  before(async () => {
    upstream = await startFakeUpstream();
  });
  after(async () => {
    await upstream.close();
  });

  it('heartbeats before the first byte do not reset the idle timer', async () => {
    // A heartbeat every 50 ms would keep refreshing a 300 ms idle timer forever if it counted as
    // upstream activity; the deadline is far away, so only the idle timer can end this stream.
    const gw = await startGateway({
      ...upstreamConfig(upstream.url),
      stream: { heartbeat_s: 0.05, idle_timeout_s: 0.3, deadline_s: 10 },
    });
    try {
      const closed = upstream.closedEarly;
      upstream.reply({ after: 'hang' });
      const { status, text } = await rawStream(gw.url, chatRequest());
      assert.equal(status, 200);
      const { chunks } = expectErrorThenDone(text, 'stream_idle_timeout');
      assert.deepEqual(chunks, []);
      const { comments } = parseSse(text);
      assert.ok(comments.length >= 2, `heartbeats were sent (${comments.length})`);
      assert.ok(comments.every((c) => c === 'heartbeat'));
      // Every heartbeat came before the error frame.
      assert.ok(text.lastIndexOf(': heartbeat') < text.indexOf('data: {"error"'));
      await upstream.waitForEarlyClose(2000, closed + 1);
    } finally {
      await gw.close();
    }
  });

  it('heartbeats appear only in gaps longer than the interval, never between fast chunks', async () => {
    const gw = await startGateway({
      ...upstreamConfig(upstream.url),
      // An interval far above the gap between fast chunks (3 ms), so that only a stall of a quarter
      // second on a loaded machine puts a heartbeat between them.
      stream: { heartbeat_s: 0.25, idle_timeout_s: 2, deadline_s: 10 },
    });
    try {
      // A slow first token, fast chunks, one long gap, fast chunks to the end.
      const delaysMs = frames.map((_, i) => (i === 0 || i === 5 ? 700 : 3));
      upstream.reply({ pieces: frames, delaysMs });
      const { status, text } = await rawStream(gw.url, chatRequest());
      assert.equal(status, 200);
      const shape = text
        .split('\n\n')
        .filter(Boolean)
        .map((block) => (block === ': heartbeat' ? 'H' : 'D'))
        .join('');
      // The recording's 10 chunks before usage become 10 client chunks (usage is stripped), then [DONE].
      assert.match(shape, /^H+D{5}H+D{6}$/);
      assert.equal(contentOfText(text), recordedText());
    } finally {
      await gw.close();
    }
  });

  it('deadline: a slow upstream past deadline_s ends with a timeout_error frame', async () => {
    const gw = await startGateway({
      ...upstreamConfig(upstream.url),
      stream: { heartbeat_s: 0, idle_timeout_s: 2, deadline_s: 0.4 },
    });
    try {
      const closed = upstream.closedEarly;
      upstream.reply({ pieces: frames, delayMs: 100 });
      const { status, text } = await rawStream(gw.url, chatRequest());
      assert.equal(status, 200);
      const { chunks, error } = expectErrorThenDone(text, 'timeout');
      assert.equal(error.type, 'timeout_error');
      assert.ok(chunks.length > 0 && chunks.length < frames.length - 2, `cut short (${chunks.length} chunks)`);
      assert.ok(recordedText().startsWith(contentOf(chunks)));
      await upstream.waitForEarlyClose(2000, closed + 1);
    } finally {
      await gw.close();
    }
  });
});

describe('stream options: error_style event, usage always', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: {
      ...upstreamConfig(url),
      stream: { heartbeat_s: 0, idle_timeout_s: 0.3, deadline_s: 5, error_style: 'event', usage: 'always' },
    },
  }));

  it('error_style event: `event: error` then data: [DONE]', async () => {
    upstream.reply({ pieces: head, after: 'reset' });
    const { text } = await rawStream(gw.url, chatRequest());
    expectErrorThenDone(text, 'upstream_connection_error', 'error');
    assert.match(text, /\n\nevent: error\ndata: \{"error":\{[^\n]*\}\}\n\ndata: \[DONE\]\n\n$/);
  });

  it('usage always: the usage chunk arrives without the client asking', async () => {
    upstream.reply({ pieces: frames });
    const { text } = await rawStream(gw.url, chatRequest());
    const { frames: out } = parseSse(text);
    assert.equal(out.at(-1)?.data, '[DONE]');
    const chunks = out.slice(0, -1).map((f) => JSON.parse(f.data));
    assert.ok(chunks.slice(0, -1).every((c) => c.usage === null && c.choices.length === 1));
    assert.deepEqual(chunks.at(-1).choices, []);
    assert.deepEqual(chunks.at(-1).usage, {
      prompt_tokens: 78,
      completion_tokens: 9,
      total_tokens: 87,
      // The recording's audio and Predicted Outputs details (all 0) are kept.
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    });
  });
});

function contentOfText(text: string): string {
  const { frames: out } = parseSse(text);
  return contentOf(out.filter((f) => f.data !== '[DONE]').map((f) => JSON.parse(f.data)));
}

import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type FakeUpstream, type RecordedRequest, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { parseSse, rawStream, startGateway, upstreamConfig } from '../helpers/gateway.ts';
import { chatRequest, contentOf, expectErrorThenDone, recordedFrames, recordedText, until } from './faults-support.ts';

const frames = recordedFrames();

/** Resolves with the error code of a fresh TCP connection attempt (or 'connected'). */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

describe('graceful shutdown', () => {
  let upstream: FakeUpstream;
  before(async () => {
    upstream = await startFakeUpstream();
    // `up/fast` finishes in ~0.3 s, `up/slow` would take ~4 s.
    upstream.reply((req: RecordedRequest) => ({
      pieces: frames,
      delayMs: (req.json as { model: string }).model === 'fast' ? 30 : 400,
    }));
  });
  after(async () => {
    await upstream.close();
  });

  it('stops accepting, lets a stream finish within the drain time, ends the other with `cancelled` (a server cancellation)', async () => {
    const gw = await startGateway({
      ...upstreamConfig(upstream.url),
      stream: { heartbeat_s: 0, idle_timeout_s: 5, deadline_s: 10 },
    });
    const port = Number(new URL(gw.url).port);
    const closed = upstream.closedEarly;
    const seen = upstream.requests.length;
    const fast = rawStream(gw.url, chatRequest({ model: 'up/fast' }));
    const slow = rawStream(gw.url, chatRequest({ model: 'up/slow' }));
    await until(() => upstream.requests.length === seen + 2, 'both upstream requests');

    const shutdown = gw.gateway.shutdown(1000);
    assert.equal(await tryConnect(port), 'ECONNREFUSED');

    const done = await fast;
    assert.equal(done.status, 200);
    const { frames: out } = parseSse(done.text);
    assert.equal(out.at(-1)?.data, '[DONE]');
    const chunks = out.slice(0, -1).map((f) => JSON.parse(f.data));
    assert.equal(contentOf(chunks), recordedText());
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');

    const cut = await slow;
    assert.equal(cut.status, 200);
    const { chunks: partial, error } = expectErrorThenDone(cut.text, 'cancelled');
    assert.equal(error.type, 'server_error');
    assert.ok(recordedText().startsWith(contentOf(partial)));
    assert.notEqual(contentOf(partial), recordedText());

    await shutdown;
    await upstream.waitForEarlyClose(2000, closed + 1);
  });

  it('ends a non-streaming call still waiting after the drain time with a 503, its upstream aborted', async () => {
    const gw = await startGateway(upstreamConfig(upstream.url), {});
    const closed = upstream.closedEarly;
    const seen = upstream.requests.length;
    // Without `stream`, sluice asks the upstream for JSON; `up/slow` dribbles for seconds.
    const pending = fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...chatRequest({ model: 'up/slow' }), stream: false }),
    });
    await until(() => upstream.requests.length === seen + 1, 'the upstream request');
    const shutdown = gw.gateway.shutdown(200);
    const res = await pending;
    assert.equal(res.status, 503);
    const body = (await res.json()) as { error: { code: string; type: string } };
    assert.deepEqual([body.error.code, body.error.type], ['cancelled', 'server_error']);
    await shutdown;
    await upstream.waitForEarlyClose(2000, closed + 1);
  });

  it('a connection that never sent a request does not hold the shutdown open', { timeout: 5000 }, async () => {
    // undici opens such a connection right after an aborted fetch; browsers preconnect.
    const gw = await startGateway(upstreamConfig(upstream.url));
    const socket = connect(Number(new URL(gw.url).port), '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const socketClosed = new Promise((r) => socket.once('close', r));
    await gw.gateway.shutdown(0);
    await socketClosed;
    assert.equal(await tryConnect(Number(new URL(gw.url).port)), 'ECONNREFUSED');
  });
});

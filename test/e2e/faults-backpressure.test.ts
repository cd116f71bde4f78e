import assert from 'node:assert/strict';
import { type IncomingMessage, request } from 'node:http';
import { describe, it } from 'node:test';
import { parseSse, startGateway, upstreamConfig, useUpstreamGateway } from '../helpers/gateway.ts';
import { chatRequest, recordedFrames, until } from './faults-support.ts';

const CONTENT_FRAMES = 4000;
const FILLER = 'x'.repeat(16 * 1024);

/**
 * ~64 MB of chat chunks: the recording's role frame, 4000 content frames of 16 KB (each tagged
 * with its index, so order and loss show), then its finish frame and [DONE].
 */
function largeStream(): Buffer[] {
  const frames = recordedFrames();
  const template = JSON.parse(frames[1].slice('data: '.length));
  const pieces = [Buffer.from(frames[0])];
  for (let i = 0; i < CONTENT_FRAMES; i++) {
    template.choices[0].delta.content = `<${i}>${FILLER}`;
    pieces.push(Buffer.from(`data: ${JSON.stringify(template)}\n\n`));
  }
  pieces.push(Buffer.from(frames[9]), Buffer.from(frames[11]));
  return pieces;
}

describe('backpressure', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: {
      ...upstreamConfig(url),
      // A short idle timeout: time spent waiting on a slow client must not count as upstream silence.
      stream: { heartbeat_s: 0, idle_timeout_s: 0.5, deadline_s: 30 },
    },
  }));

  it('shutdown is not held open by a client that stopped reading', { timeout: 10_000 }, async () => {
    const own = await startGateway({ ...upstreamConfig(upstream.url), stream: { heartbeat_s: 0, idle_timeout_s: 5, deadline_s: 30 } });
    upstream.reply({ pieces: largeStream() });
    const stalls = upstream.stalls;
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(`${own.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, resolve);
      req.on('error', reject);
      req.end(JSON.stringify(chatRequest()));
    });
    await until(() => upstream.stalls > stalls, 'the upstream to stall', 500);
    // The stream is aborted after the drain time; its last frames cannot reach a client that does
    // not read, and the connection must not keep the shutdown waiting for them.
    await own.gateway.shutdown(100);
    const closed = new Promise((r) => res.socket.once('close', r));
    res.resume();
    await closed;
  });

  it('a client that reads nothing stalls the upstream; on resume, even past the idle timeout, it gets every byte in order', async () => {
    const pieces = largeStream();
    const total = pieces.reduce((n, p) => n + p.length, 0);
    upstream.reply({ pieces });
    const start = { sent: upstream.bytesSent, stalls: upstream.stalls };

    // node:http leaves the response paused until someone reads it.
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, resolve);
      req.on('error', reject);
      req.end(JSON.stringify(chatRequest()));
    });
    assert.equal(res.statusCode, 200);

    // Wait until the upstream can send no more: its count stays put for five polls in a row.
    let sent = -1;
    for (let steps = 0, still = 0; still < 5; steps++) {
      assert.ok(steps < 500, 'the upstream never stalled');
      await new Promise((r) => setTimeout(r, 20));
      const now = upstream.bytesSent - start.sent;
      still = now === sent ? still + 1 : 0;
      sent = now;
    }
    // What is in flight is socket buffers (kernel and node), not the whole stream in sluice's memory.
    assert.ok(upstream.stalls > start.stalls, 'the upstream saw its writes refused');
    assert.ok(sent < total / 2, `sent ${sent} of ${total} bytes while the client read nothing`);
    // Stay paused past the idle timeout: the upstream is silent only because sluice stopped reading.
    await new Promise((r) => setTimeout(r, 800));

    const parts: Buffer[] = [];
    for await (const part of res) parts.push(part as Buffer);
    assert.equal(upstream.bytesSent - start.sent, total);

    const { frames } = parseSse(Buffer.concat(parts).toString('utf8'));
    assert.equal(frames.at(-1)?.data, '[DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data));
    // sluice's role chunk, every content delta, the finish chunk.
    assert.equal(chunks.length, CONTENT_FRAMES + 2);
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    for (let i = 0; i < CONTENT_FRAMES; i++) assert.equal(chunks[i + 1].choices[0].delta.content, `<${i}>${FILLER}`);
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
  });
});

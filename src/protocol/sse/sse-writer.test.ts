import assert from 'node:assert/strict';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { type OneResponse, openResponse } from '../../../test/helpers/one-response.ts';
import { sendJson } from '../http/send-json.ts';
import { DONE_FRAME, HEARTBEAT_FRAME } from './frames.ts';
import { SseWriter } from './sse-writer.ts';

/** Three times what loopback's socket buffers took here while the client read nothing (4 MiB). */
const FLOOD = 'x'.repeat(12 * 1024 * 1024);

/** Whether `promise` has settled once everything already queued has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('SseWriter', () => {
  let one: OneResponse;
  let writes: string[];
  beforeEach(async () => {
    one = await openResponse();
    writes = [];
    const write = one.res.write.bind(one.res) as (chunk: string) => boolean;
    one.res.write = ((chunk: string) => {
      writes.push(chunk);
      return write(chunk);
    }) as typeof one.res.write;
  });
  afterEach(() => one.close());

  it('commits its headers at the first frame, not before, with the SSE headers and the request id', async () => {
    const writer = new SseWriter(one.res, { requestId: 'req-1', heartbeatMs: 0 });
    writer.write('');
    assert.equal(writer.committed, false);
    assert.equal(one.res.headersSent, false);
    writer.write('data: 1\n\n');
    assert.equal(writer.committed, true);
    const response = await one.response;
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'text/event-stream');
    assert.equal(response.headers['cache-control'], 'no-cache');
    assert.equal(response.headers['x-request-id'], 'req-1');
    assert.equal(response.headers['x-accel-buffering'], 'no');
    writer.finish('');
    assert.equal(await one.body(), `data: 1\n\n${DONE_FRAME}`);
  });

  it('takes the content type it is given (the Responses surface adds a charset)', async () => {
    const writer = new SseWriter(one.res, { requestId: 'req-1', contentType: 'text/event-stream; charset=utf-8', heartbeatMs: 0 });
    writer.finish('');
    assert.equal((await one.response).headers['content-type'], 'text/event-stream; charset=utf-8');
  });

  it('a heartbeat before the first frame commits the headers; heartbeats go on while the stream is quiet', async () => {
    const writer = new SseWriter(one.res, { requestId: 'req-1', heartbeatMs: 5 });
    await one.response;
    assert.equal(writer.committed, true);
    assert.deepEqual(writes.slice(0, 1), [HEARTBEAT_FRAME]);
    writer.write('data: 1\n\n');
    const before = writes.length;
    while (writes.length === before) await sleep(5);
    assert.equal(writes.at(-1), HEARTBEAT_FRAME);
    writer.finish('');
    const body = await one.body();
    assert.match(body, /^(: heartbeat\n\n)+data: 1\n\n(: heartbeat\n\n)+data: \[DONE\]\n\n$/);
  });

  it("a dialect's own keep-alive and end marker (Anthropic's: ping events, and nothing after the last event)", async () => {
    const ping = 'event: ping\ndata: {"type":"ping"}\n\n';
    const writer = new SseWriter(one.res, { requestId: 'req-1', heartbeatMs: 5, dialect: { keepAlive: ping, done: '' } });
    await one.response;
    writer.write('event: a\ndata: {}\n\n');
    const before = writes.length;
    while (writes.length === before) await sleep(5);
    writer.finish('event: b\ndata: {}\n\n');
    const body = await one.body();
    assert.match(body, /^(event: ping\ndata: \{"type":"ping"\}\n\n)+event: a\ndata: \{\}\n\n(event: ping\n[^\n]+\n\n)+event: b\ndata: \{\}\n\n$/);
  });

  it('no heartbeat after the end', async () => {
    const writer = new SseWriter(one.res, { requestId: 'req-1', heartbeatMs: 5 });
    writer.write('data: 1\n\n');
    writer.finish('');
    await one.body();
    await sleep(30);
    assert.deepEqual(writes, ['data: 1\n\n']);
  });

  it('finish: the last frames and [DONE] in the one write that ends the response; nothing after it', async () => {
    const writer = new SseWriter(one.res, { requestId: 'req-1', heartbeatMs: 0 });
    writer.write('data: 1\n\n');
    writer.finish('data: 2\n\n');
    assert.equal(writer.ended, true);
    assert.equal(one.res.writableEnded, true);
    writer.write('data: 3\n\n');
    writer.finish('data: 4\n\n');
    writer.fail('data: 5\n\n');
    assert.deepEqual(writes, ['data: 1\n\n']);
    assert.equal(await one.body(), `data: 1\n\ndata: 2\n\n${DONE_FRAME}`);
  });

  it('fail: the error frames, then [DONE] (the headers first when nothing was sent)', async () => {
    const writer = new SseWriter(one.res, { requestId: 'req-1', heartbeatMs: 0 });
    writer.fail('data: {"error":{}}\n\n');
    assert.equal((await one.response).headers['content-type'], 'text/event-stream');
    assert.equal(await one.body(), `data: {"error":{}}\n\n${DONE_FRAME}`);
  });

  it('dispose writes nothing and stops the heartbeat: the response is free for an HTTP error', async () => {
    const writer = new SseWriter(one.res, { requestId: 'req-1', heartbeatMs: 5 });
    writer.dispose();
    await sleep(30);
    assert.equal(one.res.headersSent, false);
    assert.equal(writer.ended, true);
    writer.write('data: 1\n\n');
    assert.deepEqual(writes, []);
    sendJson(one.res, 503, { error: { code: 'x' } });
    const response = await one.response;
    assert.equal(response.statusCode, 503);
    assert.equal(response.headers['content-type'], 'application/json');
    assert.equal(await one.body(), '{"error":{"code":"x"}}');
  });

  describe('event ids', () => {
    it('none by default: the frames are the bytes the reference documents specify, `data: {json}\\n\\n` (was: an id: line on every frame)', async () => {
      const recorded: number[] = [];
      const recording = { start: () => {}, record: (_frames: string, lastId: number) => recorded.push(lastId), end: () => {} };
      for (const options of [{}, { recording }]) {
        const other = await openResponse();
        const writer = new SseWriter(other.res, { requestId: 'req-1', heartbeatMs: 0, ...options });
        writer.write('data: a\n\nevent: e\ndata: b\n\n: note\n\n');
        writer.finish('data: c\n\n');
        assert.equal(await other.body(), `data: a\n\nevent: e\ndata: b\n\n: note\n\ndata: c\n\n${DONE_FRAME}`);
        await other.close();
      }
      // A recorded stream still counts its frames (comments not): a client resumes after the number it got.
      assert.deepEqual(recorded, [2, 4]);
    });

    it('with eventIds, every frame of a write gets its own id, counting on across writes; comments get none', async () => {
      const writer = new SseWriter(one.res, { requestId: 'req-1', heartbeatMs: 0, eventIds: true });
      writer.write('data: a\n\nevent: e\ndata: b\n\n: note\n\ndata: c\n\n');
      writer.write('data: d\n\n');
      writer.finish('data: e\n\n');
      assert.equal(
        await one.body(),
        'id: 1\ndata: a\n\nid: 2\nevent: e\ndata: b\n\n: note\n\nid: 3\ndata: c\n\nid: 4\ndata: d\n\n' + `id: 5\ndata: e\n\nid: 6\n${DONE_FRAME}`,
      );
    });

    it('records what it writes, as written, from the headers to [DONE]', async () => {
      const recorded: string[] = [];
      const recording = {
        start: (type: string) => recorded.push(`start ${type}`),
        record: (frames: string, lastId: number) => recorded.push(`${lastId}|${frames}`),
        end: () => recorded.push('end'),
      };
      const writer = new SseWriter(one.res, { requestId: 'req-1', heartbeatMs: 0, recording, eventIds: true });
      writer.write('data: a\n\ndata: b\n\n');
      writer.finish('data: c\n\n');
      const body = await one.body();
      assert.deepEqual(recorded, [
        'start text/event-stream',
        '2|id: 1\ndata: a\n\nid: 2\ndata: b\n\n',
        `4|id: 3\ndata: c\n\nid: 4\n${DONE_FRAME}`,
        'end',
      ]);
      assert.equal(body, recorded[1].slice(2) + recorded[2].slice(2));
    });

    it('with a recording, outlives its client: not ended, not congested, and it records to the end', async () => {
      const recorded: string[] = [];
      const recording = { start: () => {}, record: (frames: string) => recorded.push(frames), end: () => recorded.push('end') };
      const writer = new SseWriter(one.res, { requestId: 'req-1', heartbeatMs: 5, recording, eventIds: true });
      writer.write(FLOOD);
      assert.equal(writer.congested, true);
      const drained = writer.waitForDrain(new AbortController().signal);
      one.disconnect();
      await once(one.res, 'close');
      assert.equal(await settled(drained), true);
      assert.equal(writer.ended, false);
      assert.equal(writer.congested, false);
      const before = writes.length;
      writer.write('data: after\n\n');
      await sleep(20);
      writer.finish('');
      assert.equal(writes.length, before, 'nothing more goes to the socket, not even a heartbeat');
      assert.deepEqual(recorded.slice(1), ['id: 2\ndata: after\n\n', `id: 3\n${DONE_FRAME}`, 'end']);
      assert.equal(writer.ended, true);
    });
  });

  describe('waitForDrain', () => {
    it('resolves at once while the client keeps up', async () => {
      const writer = new SseWriter(one.res, { requestId: 'req-1', heartbeatMs: 0 });
      writer.write('data: 1\n\n');
      assert.equal(writer.congested, false);
      assert.equal(await settled(writer.waitForDrain(new AbortController().signal)), true);
      writer.finish('');
    });

    it('waits while the client reads nothing, and resolves at the drain once it reads', async () => {
      const writer = new SseWriter(one.res, { requestId: 'req-1', heartbeatMs: 0 });
      writer.write(FLOOD);
      assert.equal(writer.congested, true);
      const drained = writer.waitForDrain(new AbortController().signal);
      await sleep(50);
      assert.equal(await settled(drained), false);
      one.read();
      await drained;
      assert.equal(writer.congested, false);
      writer.finish('');
      assert.equal((await one.body()).length, FLOOD.length + DONE_FRAME.length);
    });

    it('resolves when its signal aborts (a deadline, a shutdown), and at once for an aborted signal', async () => {
      const writer = new SseWriter(one.res, { requestId: 'req-1', heartbeatMs: 0 });
      writer.write(FLOOD);
      const controller = new AbortController();
      const drained = writer.waitForDrain(controller.signal);
      assert.equal(await settled(drained), false);
      controller.abort();
      assert.equal(await settled(drained), true);
      assert.equal(writer.congested, true);
      assert.equal(await settled(writer.waitForDrain(controller.signal)), true);
    });

    it('resolves when the writer ends while waiting', async () => {
      const writer = new SseWriter(one.res, { requestId: 'req-1', heartbeatMs: 0 });
      writer.write(FLOOD);
      const drained = writer.waitForDrain(new AbortController().signal);
      assert.equal(await settled(drained), false);
      writer.fail('data: {"error":{}}\n\n');
      assert.equal(await settled(drained), true);
      assert.equal(await settled(writer.waitForDrain(new AbortController().signal)), true);
    });

    it('a client that goes away ends the writer and wakes the waiter', async () => {
      const writer = new SseWriter(one.res, { requestId: 'req-1', heartbeatMs: 0 });
      writer.write(FLOOD);
      const drained = writer.waitForDrain(new AbortController().signal);
      one.disconnect();
      await once(one.res, 'close');
      assert.equal(await settled(drained), true);
      assert.equal(writer.ended, true);
      const before = writes.length;
      writer.write('data: 1\n\n');
      writer.finish('');
      assert.equal(writes.length, before);
    });
  });
});

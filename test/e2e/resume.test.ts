import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { adminCall, projectWithKey } from '../helpers/admin-client.ts';
import { type FakeUpstream, prng, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { configSchema } from '../../src/config/schema.ts';
import { createGateway } from '../../src/server/app.ts';
import { startGateway, type TestGateway, upstreamConfig } from '../helpers/gateway.ts';

const MASTER = 'sk-master-resume-test';
const WORDS = 120;

/** A long OpenAI-compatible stream, one piece per chunk, so that a client can leave in the middle. */
function longStream(): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const pieces = [chunk({ role: 'assistant', content: '' })];
  for (let i = 0; i < WORDS; i++) pieces.push(chunk({ content: `w${i} ` }));
  pieces.push(chunk({}, 'stop'));
  pieces.push(
    `data: ${JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 9, completion_tokens: WORDS, total_tokens: 9 + WORDS } })}\n\n`,
  );
  pieces.push('data: [DONE]\n\n');
  return pieces;
}

const BODY = { model: 'up/gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'count' }] };

/**
 * The complete frames of an SSE text (comments, i.e. heartbeats, left out) and the last frame's
 * id: its `id:` line, or without id lines (stream.resume.event_ids off) the number of frames got.
 */
function framesOf(text: string): { frames: string[]; lastId: number } {
  const frames = text
    .split('\n\n')
    .slice(0, -1)
    .filter((f) => !f.startsWith(':'))
    .map((f) => `${f}\n\n`);
  const last = frames.at(-1)?.match(/^id: (\d+)\n/);
  return { frames, lastId: last ? Number(last[1]) : frames.length };
}

/** What differs between two runs of the same stream: the request id in the frames, and the second it started. */
function normalized(text: string, requestId: string): string {
  return text.replaceAll(requestId, '<request-id>').replace(/"created":\d+/g, '"created":0');
}

/**
 * Reads an SSE response until `frames` complete frames arrived (then leaves, as a dropped
 * connection does) or to its end; returns the text of the complete frames.
 */
async function readUntil(res: Response, controller: AbortController, frames: number): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (framesOf(text).frames.length >= frames) break;
    }
  } catch {
    // The connection was dropped by the other side.
  }
  controller.abort();
  const complete = text.slice(0, text.lastIndexOf('\n\n') + 2);
  const kept = framesOf(complete).frames.slice(0, frames);
  return kept.join('');
}

function post(url: string, key: string, signal?: AbortSignal) {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(BODY),
    signal,
  });
}

function resume(url: string, key: string, id: string, lastId: number | undefined, signal?: AbortSignal) {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (lastId !== undefined) headers['last-event-id'] = String(lastId);
  return fetch(`${url}/v1/streams/${id}`, { headers, signal });
}

/**
 * A stream whose client drops its connection at the given frame counts, reconnecting each time
 * with the last id it got: the frames joined, and the request id.
 */
async function droppedRun(url: string, key: string, drops: number[]): Promise<{ text: string; requestId: string }> {
  let controller = new AbortController();
  const first = await post(url, key, controller.signal);
  assert.equal(first.status, 200);
  const requestId = first.headers.get('x-request-id')!;
  let text = await readUntil(first, controller, drops[0] ?? Infinity);
  for (let i = 1; i <= drops.length; i++) {
    controller = new AbortController();
    const res = await resume(url, key, requestId, framesOf(text).lastId, controller.signal);
    assert.equal(res.status, 200, await res.clone().text());
    text += await readUntil(res, controller, drops[i] ?? Infinity);
  }
  return { text, requestId };
}

describe('resumable streams (stream.resume)', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  let uninterrupted: string;

  before(async () => {
    upstream = await startFakeUpstream();
    // One chunk every 5 ms: a stream of ~0.6 s, long enough to leave in the middle of it.
    upstream.reply({ headers: { 'content-type': 'text/event-stream' }, pieces: longStream(), delayMs: 5 });
    gw = await startGateway({
      ...upstreamConfig(upstream.url),
      auth: { master_key: MASTER },
      stream: { resume: { enabled: true, grace_s: 30, event_ids: true } },
    });
    const res = await post(gw.url, MASTER);
    uninterrupted = normalized(await res.text(), res.headers.get('x-request-id')!);
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  it('every frame of the uninterrupted run has its id, 1, 2, 3 ... [DONE] included', () => {
    const { frames } = framesOf(uninterrupted);
    assert.equal(frames.length, WORDS + 4); // role, words, finish, usage, [DONE]
    frames.forEach((frame, i) => assert.ok(frame.startsWith(`id: ${i + 1}\ndata: `), frame));
    assert.equal(frames.at(-1), `id: ${frames.length}\ndata: [DONE]\n\n`);
  });

  it('a client dropped at random points and resuming with Last-Event-ID gets exactly the uninterrupted frames; the upstream is called once', async () => {
    const total = framesOf(uninterrupted).frames.length;
    for (const seed of [1, 2, 3, 4, 5]) {
      const random = prng(seed);
      // Up to three drops, at increasing frame counts.
      const drops: number[] = [];
      let at = 0;
      for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
        const step = 1 + Math.floor(random() * (total / 3));
        if (at + step >= total) break;
        at += step;
        drops.push(step);
      }
      const calls = upstream.requests.length;
      const cut = upstream.closedEarly;
      const run = await droppedRun(gw.url, MASTER, drops);
      assert.equal(normalized(run.text, run.requestId), uninterrupted, `seed ${seed}, drops after ${drops.join(', ')} frames`);
      assert.equal(upstream.requests.length, calls + 1, 'the upstream was called once');
      assert.equal(upstream.closedEarly, cut, 'a dropped client did not cut the upstream');
      // The stream ran to its end within the grace: one request, completed (docs/streams/resume.md).
      const record = (await adminCall(gw.url, MASTER, 'GET', `/v1/requests/${run.requestId}`)).body;
      assert.equal(record.outcome, 'ok');
      assert.equal(record.usage.output_tokens, WORDS);
    }
  });

  it('without Last-Event-ID, the whole stream; after the last id, nothing more; an id past the end is a 400', async () => {
    const res = await post(gw.url, MASTER);
    const requestId = res.headers.get('x-request-id')!;
    const text = await res.text();
    assert.equal(await (await resume(gw.url, MASTER, requestId, undefined)).text(), text);
    assert.equal(await (await resume(gw.url, MASTER, `chatcmpl-${requestId}`, framesOf(text).lastId)).text(), '');
    const past = await resume(gw.url, MASTER, requestId, framesOf(text).lastId + 1);
    assert.equal(past.status, 400);
    assert.equal(((await past.json()) as any).error.param, 'Last-Event-ID');
    const bad = await fetch(`${gw.url}/v1/streams/${requestId}`, { headers: { authorization: `Bearer ${MASTER}`, 'last-event-id': 'x1' } });
    assert.equal(bad.status, 400);
  });

  it('a Responses stream is numbered and resumed the same way', async () => {
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${MASTER}` },
      body: JSON.stringify({ model: 'up/gpt-4o-mini', input: 'count', stream: true }),
    });
    const requestId = res.headers.get('x-request-id')!;
    const text = await res.text();
    const { frames } = framesOf(text);
    frames.forEach((frame, i) => assert.ok(frame.startsWith(`id: ${i + 1}\n${i === frames.length - 1 ? 'data' : 'event'}: `), frame));
    const again = await resume(gw.url, MASTER, `resp_${requestId}`, 5);
    assert.equal(again.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(await again.text(), frames.slice(5).join(''));
  });

  it('an unknown stream is a 404 in the OpenAI error shape', async () => {
    const res = await resume(gw.url, MASTER, 'nosuchstream0000000a', 0);
    assert.equal(res.status, 404);
    const body = (await res.json()) as any;
    assert.equal(body.error.code, 'stream_not_found');
    assert.equal(body.error.type, 'not_found_error');
    assert.equal(body.error.param, 'request_id');
  });

  it("another project's key gets a 404 for a stream; the master key and the project's key resume it", async () => {
    const a = await projectWithKey(gw.url, MASTER, 'team-a');
    const b = await projectWithKey(gw.url, MASTER, 'team-b');
    const res = await post(gw.url, a.key);
    const requestId = res.headers.get('x-request-id')!;
    const text = await res.text();
    const other = await resume(gw.url, b.key, requestId, 0);
    assert.equal(other.status, 404);
    assert.equal(((await other.json()) as any).error.code, 'stream_not_found');
    assert.equal(await (await resume(gw.url, a.key, requestId, 0)).text(), text);
    assert.equal(await (await resume(gw.url, MASTER, requestId, 0)).text(), text);
    const masters = await post(gw.url, MASTER);
    const mastersId = masters.headers.get('x-request-id')!;
    await masters.text();
    assert.equal((await resume(gw.url, a.key, mastersId, 0)).status, 404, "a project key cannot resume the master key's stream");
  });
});

describe('resumable streams: 410 once a stream is no longer kept, and the grace after a disconnect', () => {
  let upstream: FakeUpstream;
  // Streams kept 0.2 s; streams kept 2 at most, whose client has 0.05 s to come back.
  let shortLived: TestGateway;
  let small: TestGateway;

  before(async () => {
    upstream = await startFakeUpstream();
    upstream.reply({ headers: { 'content-type': 'text/event-stream' }, pieces: longStream() });
    const config = { ...upstreamConfig(upstream.url), auth: { master_key: MASTER } };
    shortLived = await startGateway({ ...config, stream: { resume: { enabled: true, ttl_s: 0.2 } } });
    small = await startGateway({ ...config, stream: { resume: { enabled: true, buffer_streams: 2, grace_s: 0.05 } } });
  });
  after(async () => {
    await shortLived?.close();
    await small?.close();
    await upstream?.close();
  });

  async function stream(gw: TestGateway): Promise<string> {
    const res = await post(gw.url, MASTER);
    await res.text();
    return res.headers.get('x-request-id')!;
  }

  it('a stream past its ttl is a 410 that says why', async () => {
    const id = await stream(shortLived);
    await sleep(400);
    const res = await resume(shortLived.url, MASTER, id, 0);
    assert.equal(res.status, 410);
    const body = (await res.json()) as any;
    assert.equal(body.error.code, 'stream_expired');
    assert.equal(body.error.type, 'not_found_error');
    assert.match(body.error.message, /ttl_s/);
  });

  it('a stream pushed out by newer ones (buffer_streams) is a 410', async () => {
    const first = await stream(small);
    await stream(small);
    await stream(small);
    const res = await resume(small.url, MASTER, first, 0);
    assert.equal(res.status, 410);
    assert.match(((await res.json()) as any).error.message, /more than 2 streams/);
  });

  it('a stream whose client left is cancelled after grace_s: a resume gets the cancellation frame and [DONE]', async () => {
    upstream.reply({ headers: { 'content-type': 'text/event-stream' }, pieces: longStream(), delayMs: 20 });
    const controller = new AbortController();
    const res = await post(small.url, MASTER, controller.signal);
    const id = res.headers.get('x-request-id')!;
    await readUntil(res, controller, 3);
    await upstream.waitForEarlyClose(10_000, upstream.closedEarly + 1);
    const text = await (await resume(small.url, MASTER, id, 0)).text();
    const { frames } = framesOf(text);
    assert.match(frames.at(-2) ?? '', /"code":"cancelled"/);
    assert.match(frames.at(-1) ?? '', /data: \[DONE\]/);
    assert.ok(frames.length < WORDS, 'the upstream was cut before its end');
  });
});

describe('resumable streams without id lines (stream.resume.event_ids off, the default)', () => {
  it("the frames are the reference documents' bytes, and Last-Event-ID is the number of events got", async () => {
    const upstream = await startFakeUpstream();
    upstream.reply({ headers: { 'content-type': 'text/event-stream' }, pieces: longStream(), delayMs: 5 });
    const gw = await startGateway({ ...upstreamConfig(upstream.url), auth: { master_key: MASTER }, stream: { resume: { enabled: true } } });
    try {
      const res = await post(gw.url, MASTER);
      const uninterrupted = normalized(await res.text(), res.headers.get('x-request-id')!);
      assert.doesNotMatch(uninterrupted, /^id:/m);
      assert.ok(uninterrupted.startsWith('data: {"id":"chatcmpl-'));
      const run = await droppedRun(gw.url, MASTER, [7, 11]);
      assert.equal(normalized(run.text, run.requestId), uninterrupted);
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
});

describe('resuming is off by default', () => {
  it('GET /v1/streams/{id} is a 404, and no frame carries an id: line (was: every frame, resumable or not)', async () => {
    const upstream = await startFakeUpstream();
    upstream.reply({ headers: { 'content-type': 'text/event-stream' }, pieces: longStream() });
    const gw = await startGateway({ ...upstreamConfig(upstream.url), auth: { master_key: MASTER } });
    try {
      const res = await post(gw.url, MASTER);
      const text = await res.text();
      assert.ok(text.startsWith('data: {"id":"chatcmpl-'));
      assert.doesNotMatch(text, /^id:/m);
      const again = await resume(gw.url, MASTER, res.headers.get('x-request-id')!, 0);
      assert.equal(again.status, 404);
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
});

describe('resumable streams in Redis: another instance serves the resume', () => {
  const redisUrl = process.env.REDIS_URL;
  let upstream: FakeUpstream;
  let first: TestGateway;
  let second: TestGateway;
  let dir: string | undefined;

  before(async () => {
    if (!redisUrl) return;
    upstream = await startFakeUpstream();
    upstream.reply({ headers: { 'content-type': 'text/event-stream' }, pieces: longStream(), delayMs: 5 });
    // A prefix of its own, so that runs sharing one Redis do not meet.
    const limits = { redis_url: redisUrl, redis_prefix: `sluice-test-resume-${process.pid}-${Date.now()}:` };
    // One store for both, so that a key created on one is known on the other.
    dir = mkdtempSync(join(tmpdir(), 'sluice-resume-'));
    const store = { path: join(dir, 'sluice.db') };
    const config = {
      ...upstreamConfig(upstream.url),
      auth: { master_key: MASTER },
      limits,
      store,
      stream: { resume: { enabled: true, ttl_s: 2 } },
    };
    first = await startGateway(config);
    second = await startGateway(config);
  });
  after(async () => {
    await first?.close();
    await second?.close();
    await upstream?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a stream dropped on one instance is resumed on the other, live, to the same frames as an uninterrupted run', async (t) => {
    if (!redisUrl) return t.skip('REDIS_URL is not set: the Redis-backed buffer is not tested');
    const whole = await post(first.url, MASTER);
    const uninterrupted = normalized(await whole.text(), whole.headers.get('x-request-id')!);
    const calls = upstream.requests.length;
    const controller = new AbortController();
    const res = await post(first.url, MASTER, controller.signal);
    const requestId = res.headers.get('x-request-id')!;
    let text = await readUntil(res, controller, 10);
    const again = await resume(second.url, MASTER, requestId, framesOf(text).lastId);
    assert.equal(again.status, 200);
    text += await again.text();
    assert.equal(normalized(text, requestId), uninterrupted);
    assert.equal(upstream.requests.length, calls + 1, 'the upstream was called once');
  });

  it("another instance refuses another project's key (404) and knows an unknown stream from none (404)", async (t) => {
    if (!redisUrl) return t.skip('REDIS_URL is not set: the Redis-backed buffer is not tested');
    const other = await projectWithKey(first.url, MASTER, 'team-other');
    const res = await post(first.url, MASTER);
    const requestId = res.headers.get('x-request-id')!;
    await res.text();
    assert.equal((await resume(second.url, other.key, requestId, 0)).status, 404);
    assert.equal((await resume(second.url, MASTER, 'nosuchstream0000000b', 0)).status, 404);
  });

  it('another instance answers 410 for a stream that expired in Redis', async (t) => {
    if (!redisUrl) return t.skip('REDIS_URL is not set: the Redis-backed buffer is not tested');
    const res = await post(first.url, MASTER);
    const requestId = res.headers.get('x-request-id')!;
    await res.text();
    // Redis expires the stream's keys ttl_s (2 s) after its last write.
    await sleep(3_500);
    const gone = await resume(second.url, MASTER, requestId, 0);
    assert.equal(gone.status, 410);
    const body = (await gone.json()) as any;
    assert.equal(body.error.code, 'stream_expired');
    assert.match(body.error.message, /ttl_s/);
  });
});

describe('resumable streams with Redis down', () => {
  it('a Redis that is unreachable costs the mirror, not the stream: local resumes work, an id this instance never had is a 503', async () => {
    const upstream = await startFakeUpstream();
    upstream.reply({ headers: { 'content-type': 'text/event-stream' }, pieces: longStream() });
    const logs: string[] = [];
    // Port 1 on loopback: nothing listens there, so every connection attempt is refused.
    const config = configSchema.parse({
      ...upstreamConfig(upstream.url),
      server: { port: 0, host: '127.0.0.1' },
      store: { path: ':memory:' },
      auth: { master_key: MASTER },
      limits: { redis_url: 'redis://127.0.0.1:1' },
      stream: { resume: { enabled: true } },
    });
    const gateway = createGateway(config, {}, (message) => logs.push(message));
    const url = `http://127.0.0.1:${(await gateway.listen()).port}`;
    const gw = { url, close: () => gateway.shutdown(0) };
    try {
      const res = await post(gw.url, MASTER);
      const text = await res.text();
      assert.ok(text.endsWith('data: [DONE]\n\n'));
      assert.equal(await (await resume(gw.url, MASTER, res.headers.get('x-request-id')!, 0)).text(), text);
      const elsewhere = await resume(gw.url, MASTER, 'nosuchstream0000000c', 0);
      assert.equal(elsewhere.status, 503);
      assert.equal(((await elsewhere.json()) as any).error.code, 'stream_buffer_unavailable');
      assert.ok(logs.length <= 2, `Redis being down is logged once, not per write: ${logs.join(' | ')}`);
    } finally {
      await gw.close();
      await upstream.close();
    }
  });
});

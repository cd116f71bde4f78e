import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import type { LedgerRecord } from '../../src/accounting/ledger-record.ts';
import { type FakeUpstream, startFakeUpstream, type UpstreamReply } from '../helpers/fake-upstream.ts';
import { openAIStreamBody } from '../helpers/fixtures.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import {
  type ClientResult,
  expectHttpError,
  expectValidFrames,
  fullListener,
  muteServer,
  requestIds,
  rowsSince,
  streamClient,
} from './faults-matrix-support.ts';
import { contentOf, expectErrorThenDone, groqErrorFrame, recordedFrames, recordedText, until } from './faults-support.ts';

/**
 * The fault matrix: every way a stream can break, each asserted three ways: what the client got
 * (every data frame JSON or [DONE]; an error frame then [DONE] once the stream started, an HTTP
 * error in the OpenAI shape before), what happened to the upstream connection (closed by sluice
 * when sluice gave up on it, else ended by the upstream), and exactly one ledger row with the
 * outcome and error code. The cases other files already pin (faults-stream, faults-http,
 * faults-shutdown, faults-backpressure, faults-mixed-load) are repeated here only where they
 * lacked one of the three; docs/reliability/report.md has the whole table. Bounded: ~20 s in all.
 */

const frames = recordedFrames();
const head = frames.slice(0, 3); // role, "The", " capital"
const headText = recordedText(head);
const toolFrames = openAIStreamBody('openai-chat/gpt4o-mini-tool-call.sse')
  .toString('utf8')
  .split(/(?<=\n\n)/);

/** The parser's limit on one pending event (protocol/sse/parse-upstream.ts DEFAULT_MAX_BUFFER). */
const PARSER_LIMIT = 4 * 1024 * 1024;

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

const chat = (model = 'up/gpt-4o-mini') => ({ model, messages: [{ role: 'user', content: 'hi' }], stream: true });

function expectRow(rows: LedgerRecord[], result: ClientResult | null, outcome: LedgerRecord['outcome'], code: string | null): LedgerRecord {
  assert.equal(rows.length, 1, 'exactly one ledger row');
  const [row] = rows;
  if (result?.requestId) assert.equal(row.requestId, result.requestId, 'the row is the request the client saw');
  assert.deepEqual({ outcome: row.outcome, code: row.errorCode, streamed: row.streamed }, { outcome, code, streamed: true });
  return row;
}

describe('fault matrix: one gateway, every fault', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  let full: Awaited<ReturnType<typeof fullListener>>;
  let mute: Awaited<ReturnType<typeof muteServer>>;

  before(async () => {
    upstream = await startFakeUpstream();
    full = await fullListener();
    mute = await muteServer();
    const key = { api_key: 'sk-upstream' };
    gw = await startGateway({
      providers: {
        up: { base_url: `${upstream.url}/v1`, ...key },
        refused: { base_url: `http://127.0.0.1:${await closedPort()}/v1`, ...key },
        stalled: { base_url: `http://127.0.0.1:${full.port}/v1`, ...key },
        mute: { base_url: `http://127.0.0.1:${mute.port}/v1`, ...key },
      },
      stream: { heartbeat_s: 0, idle_timeout_s: 0.6, deadline_s: 1.5 },
      upstream: { connect_timeout_s: 0.3, headers_timeout_s: 0.3 },
      ledger: { flush_interval_ms: 20 },
    });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
    await mute.close();
    full.close();
  });

  /** Runs one request against a reply; returns what the client saw, the new ledger rows, and how the upstream ended. */
  async function run(reply: UpstreamReply | null, model?: string, hangUpWhen?: (text: string) => boolean) {
    if (reply) upstream.reply(reply);
    const before = { ids: await requestIds(gw.gateway), closed: upstream.closedEarly, requests: upstream.requests.length };
    const result = await streamClient(gw.url, chat(model), hangUpWhen).done;
    const rows = await rowsSince(gw.gateway, before.ids, 1);
    await until(() => gw.gateway.context.scopes.size === 0, 'the request scope released');
    return { result, rows, reached: upstream.requests.length - before.requests, closedBySluice: upstream.closedEarly - before.closed, before };
  }

  it('client disconnect before the first token: upstream closed, one row cancelled', async () => {
    upstream.reply({ after: 'hang' });
    const before = { ids: await requestIds(gw.gateway), closed: upstream.closedEarly, requests: upstream.requests.length };
    const client = streamClient(gw.url, chat());
    await until(() => upstream.requests.length > before.requests, 'the upstream request');
    assert.equal(client.text, '', 'nothing was sent yet');
    client.req.destroy();
    await client.done;
    await upstream.waitForEarlyClose(2000, before.closed + 1);
    expectRow(await rowsSince(gw.gateway, before.ids, 1), null, 'cancelled', 'cancelled');
  });

  it('client disconnect mid-text: upstream closed, one row cancelled with the text so far counted', async () => {
    const r = await run({ pieces: head, after: 'hang' }, undefined, (text) => text.includes('"content":"The"'));
    assert.ok(r.result.aborted);
    expectValidFrames(r.result.text.slice(0, r.result.text.lastIndexOf('\n\n') + 2));
    await upstream.waitForEarlyClose(2000, r.before.closed + 1);
    expectRow(r.rows, r.result, 'cancelled', 'cancelled');
  });

  it('client disconnect mid-tool-call: upstream closed, one row cancelled', async () => {
    // The recording's first tool_calls delta and two argument pieces, then silence.
    const r = await run({ pieces: toolFrames.slice(0, 3), after: 'hang' }, undefined, (text) => text.includes('"arguments":"country"'));
    assert.ok(r.result.aborted);
    assert.match(r.result.text, /"tool_calls":\[\{"index":0,"id":"call_ZR5UUuTt3pf61kjwAJIYdVMj"/);
    await upstream.waitForEarlyClose(2000, r.before.closed + 1);
    expectRow(r.rows, r.result, 'cancelled', 'cancelled');
  });

  it('upstream connection refused: HTTP 502 upstream_connection_error, one row', async () => {
    const r = await run(null, 'refused/m');
    assert.match(expectHttpError(r.result, 502, 'upstream_connection_error').message, /ECONNREFUSED/);
    assert.equal(r.reached, 0);
    expectRow(r.rows, r.result, 'error', 'upstream_connection_error');
  });

  it('upstream connect timeout (a listener that never accepts): HTTP 502 within connect_timeout_s, one row', async () => {
    const started = Date.now();
    const r = await run(null, 'stalled/m');
    assert.match(expectHttpError(r.result, 502, 'upstream_connection_error').message, /connect timeout/);
    assert.ok(Date.now() - started < 1400, `answered in ${Date.now() - started} ms, before the idle timeout and the deadline`);
    expectRow(r.rows, r.result, 'error', 'upstream_connection_error');
  });

  it('upstream accepts and never answers: HTTP 504 upstream_timeout at headers_timeout_s, its connection closed, one row', async () => {
    const closed = mute.closedByPeer;
    const r = await run(null, 'mute/m');
    expectHttpError(r.result, 504, 'upstream_timeout');
    await until(() => mute.closedByPeer > closed, 'sluice closing the mute connection');
    expectRow(r.rows, r.result, 'error', 'upstream_timeout');
  });

  it('200 then reset before any byte of the body: HTTP 502, one row', async () => {
    const r = await run({ pieces: [], after: 'reset' });
    expectHttpError(r.result, 502, 'upstream_connection_error');
    expectRow(r.rows, r.result, 'error', 'upstream_connection_error');
  });

  it('200 then reset mid-stream: error frame then [DONE], one row', async () => {
    const r = await run({ pieces: head, after: 'reset' });
    assert.equal(r.result.status, 200);
    expectValidFrames(r.result.text);
    assert.equal(contentOf(expectErrorThenDone(r.result.text, 'upstream_connection_error').chunks), headText);
    expectRow(r.rows, r.result, 'error', 'upstream_connection_error');
  });

  it('truncated body (ends without finish_reason or [DONE]): upstream_stream_truncated frame, one row', async () => {
    const r = await run({ pieces: frames.slice(0, 5) });
    expectValidFrames(r.result.text);
    expectErrorThenDone(r.result.text, 'upstream_stream_truncated');
    assert.equal(r.closedBySluice, 0, 'the upstream ended its response itself');
    expectRow(r.rows, r.result, 'error', 'upstream_stream_truncated');
  });

  it('truncated inside a frame: upstream_malformed_stream frame, one row', async () => {
    const r = await run({ pieces: [...head, 'data: {"id":"chatcmpl-x","choices":[{"index":0,"delta":{"content":"Par'] });
    expectValidFrames(r.result.text);
    assert.equal(contentOf(expectErrorThenDone(r.result.text, 'upstream_malformed_stream').chunks), headText);
    expectRow(r.rows, r.result, 'error', 'upstream_malformed_stream');
  });

  it('malformed chunk: upstream_malformed_stream frame, nothing after it reaches the client, upstream closed, one row', async () => {
    const r = await run({ pieces: [...head, 'data: {"choices":[{"delta":\n\n', ...frames.slice(3)], after: 'hang' });
    expectValidFrames(r.result.text);
    assert.equal(contentOf(expectErrorThenDone(r.result.text, 'upstream_malformed_stream').chunks), headText);
    await upstream.waitForEarlyClose(2000, r.before.closed + 1);
    expectRow(r.rows, r.result, 'error', 'upstream_malformed_stream');
  });

  it(`a frame larger than the parser's limit (${PARSER_LIMIT} characters): upstream_malformed_stream, upstream closed, one row`, async () => {
    const huge = `data: {"choices":[{"index":0,"delta":{"content":"${'x'.repeat(PARSER_LIMIT)}`;
    const r = await run({ pieces: [...head, huge], after: 'hang' });
    expectValidFrames(r.result.text);
    const { error } = expectErrorThenDone(r.result.text, 'upstream_malformed_stream');
    assert.match(error.message, /max buffer size of 4194304/);
    await upstream.waitForEarlyClose(2000, r.before.closed + 1);
    expectRow(r.rows, r.result, 'error', 'upstream_malformed_stream');
  });

  it('endless pings, no content: bounded by the deadline (pings are upstream activity, so not the idle timeout), upstream closed, one row', async () => {
    const started = Date.now();
    const r = await run({ pieces: Array.from({ length: 600 }, () => ': ping\n\n'), delayMs: 100 });
    assert.ok(Date.now() - started < 3000, `ended after ${Date.now() - started} ms`);
    // Nothing was sent to the client (heartbeats off): the failure is an HTTP error it can retry.
    expectHttpError(r.result, 504, 'timeout');
    await upstream.waitForEarlyClose(2000, r.before.closed + 1);
    expectRow(r.rows, r.result, 'error', 'timeout');
  });

  it('a stream that never ends: timeout frame at deadline_s, upstream closed, one row', async () => {
    const endless = [...head, ...Array.from({ length: 600 }, () => frames[2])];
    const r = await run({ pieces: endless, delayMs: 100 });
    expectValidFrames(r.result.text);
    const { chunks } = expectErrorThenDone(r.result.text, 'timeout');
    assert.ok(chunks.length > 3 && chunks.length < 100, `${chunks.length} chunks before the deadline`);
    await upstream.waitForEarlyClose(2000, r.before.closed + 1);
    expectRow(r.rows, r.result, 'error', 'timeout');
  });

  it("a 200 whose first event is an error: an HTTP error carrying the upstream's own code, one row", async () => {
    const r = await run({ body: groqErrorFrame() });
    const error = expectHttpError(r.result, 400, 'invalid_request');
    assert.equal(error.type, 'invalid_request_error');
    assert.equal(error.upstream?.code, 'tool_use_failed');
    expectRow(r.rows, r.result, 'error', 'invalid_request');
  });
});

describe('fault matrix: a slow reader', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway({
      providers: { up: { base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' } },
      // The idle timeout far below the deadline, so a paused stream ending at the deadline shows the
      // pause is not idleness; 1 s rather than less, which an upstream on a loaded machine outlasted.
      stream: { heartbeat_s: 0, idle_timeout_s: 1, deadline_s: 3 },
      ledger: { flush_interval_ms: 20 },
    });
    // A first request loads what a gateway loads once (token counters), so the timed one below starts warm.
    upstream.reply({ pieces: frames });
    await streamClient(gw.url, chat()).done;
    await rowsSince(gw.gateway, new Set(), 1);
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('a client that stops reading: the upstream is paused (memory bounded), the deadline still ends it, upstream closed, one row', async () => {
    // ~32 MB of chunks: far more than the socket buffers between the fake upstream and a client that
    // reads nothing. Words, not one repeated letter: local token counting of a 16 KB run of one
    // letter is slow enough to hold the event loop past the deadline.
    const template = JSON.parse(frames[1].slice('data: '.length));
    const filler = `${recordedText()} `.repeat(Math.ceil((16 * 1024) / (recordedText().length + 1)));
    const pieces = [frames[0]];
    for (let i = 0; i < 2000; i++) {
      template.choices[0].delta.content = `<${i}>${filler}`;
      pieces.push(`data: ${JSON.stringify(template)}\n\n`);
    }
    const total = pieces.reduce((n, p) => n + Buffer.byteLength(p), 0);
    upstream.reply({ pieces: [...pieces, frames[9], frames[11]] });
    const before = { ids: await requestIds(gw.gateway), closed: upstream.closedEarly, sent: upstream.bytesSent };
    // The gateway's side of the client connection: what node holds for a client that does not read.
    let socket: Socket | undefined;
    gw.gateway.server.once('connection', (s: Socket) => (socket = s));
    const client = streamClient(gw.url, chat());
    const res = await client.response;
    res.pause();
    let buffered = 0;
    const watch = setInterval(() => (buffered = Math.max(buffered, socket?.writableLength ?? 0)), 10);
    // The deadline (3 s) ends the request although the client never read: one row, upstream closed.
    const rows = await rowsSince(gw.gateway, before.ids, 1, 8000);
    clearInterval(watch);
    expectRow(rows, null, 'error', 'timeout');
    await upstream.waitForEarlyClose(2000, before.closed + 1);
    const sent = upstream.bytesSent - before.sent;
    assert.ok(sent < total / 2, `the upstream sent ${sent} of ${total} bytes: it was paused, not read into memory`);
    // sluice stops reading while the client is congested: at most about one upstream read's frames
    // wait in node beyond the socket's own buffers (the rest stays in the upstream, paused).
    assert.ok(buffered < 1024 * 1024, `${buffered} bytes buffered for the client in sluice`);
    // What the client reads when it comes back: the frames that were in flight, then the end.
    res.resume();
    const result = await client.done;
    expectValidFrames(result.text);
    expectErrorThenDone(result.text, 'timeout');
    await until(() => gw.gateway.context.scopes.size === 0, 'the request scope released');
  });
});

describe('fault matrix: shutdown with 1,000 open streams', () => {
  const STREAMS = 1000;
  let upstream: FakeUpstream;
  before(async () => {
    upstream = await startFakeUpstream();
  });
  after(async () => {
    await upstream.close();
  });

  it(
    `gateway.shutdown (what SIGTERM runs) ends ${STREAMS} open streams with cancelled (a server cancellation), closes every upstream, writes ${STREAMS} rows`,
    { timeout: 60_000 },
    async () => {
      // A file, not :memory:, so the rows can be read after the shutdown closed the store.
      const dir = mkdtempSync(join(tmpdir(), 'sluice-shutdown-'));
      const gw = await startGateway({
        providers: { up: { base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' } },
        stream: { heartbeat_s: 0, idle_timeout_s: 60, deadline_s: 120 },
        ledger: { flush_interval_ms: 20 },
        store: { path: join(dir, 'sluice.db') },
      });
      upstream.reply({ pieces: head, after: 'hang' });
      const closed = upstream.closedEarly;
      const clients = Array.from({ length: STREAMS }, () => streamClient(gw.url, chat()));
      // Every stream is open: its first tokens reached the client.
      await until(() => clients.every((c) => c.text.includes('"content":" capital"')), `${STREAMS} streams open`, 3000, 10);
      assert.equal(gw.gateway.context.scopes.size, STREAMS);
      const started = Date.now();
      await gw.gateway.shutdown(200);
      const took = Date.now() - started;
      const results = await Promise.all(clients.map((c) => c.done));
      for (const result of results) {
        assert.equal(result.status, 200);
        expectValidFrames(result.text);
        assert.equal(contentOf(expectErrorThenDone(result.text, 'cancelled').chunks), headText);
      }
      assert.ok(took < 10_000, `shutdown took ${took} ms`);
      await upstream.waitForEarlyClose(5000, closed + STREAMS);
      assert.equal(gw.gateway.context.scopes.size, 0);
      // shutdown() flushed the ledger before it closed the store: read what it wrote.
      const ids = new Set(results.map((r) => r.requestId));
      assert.equal(ids.size, STREAMS, 'one request id each');
      const db = new DatabaseSync(join(dir, 'sluice.db'), { readOnly: true });
      try {
        const rows = db.prepare('select request_id, outcome, error_code from ledger').all() as {
          request_id: string;
          outcome: string;
          error_code: string;
        }[];
        assert.equal(rows.length, STREAMS, 'one row per stream');
        assert.ok(rows.every((r) => ids.has(r.request_id) && r.outcome === 'error' && r.error_code === 'cancelled'));
      } finally {
        db.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

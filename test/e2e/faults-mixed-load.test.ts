import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { APIError } from 'openai';
import type { LedgerRecord } from '../../src/accounting/ledger-record.ts';
import { type FakeUpstream, type RecordedRequest, startFakeUpstream, type UpstreamReply } from '../helpers/fake-upstream.ts';
import { startGateway, type TestGateway, upstreamConfig } from '../helpers/gateway.ts';
import { recordedFrames, recordedText, streamRequest, until } from './faults-support.ts';

/**
 * Every ending at once: many concurrent streams through one gateway, each ending its own way
 * (completed, upstream reset, malformed chunk, idle upstream, upstream 503, client gone), and then
 * the invariants that must hold for all of them together: what each client saw, one ledger record
 * per request with the right outcome, every upstream request that sluice gave up on closed, and no
 * stream session left behind. Bounded: 240 requests, 24 at a time, ~2 s.
 */
const KINDS = ['completed', 'reset', 'malformed', 'idle', 'overloaded', 'client-gone'] as const;
type Kind = (typeof KINDS)[number];
const REQUESTS = 240;
const CONCURRENCY = 24;

const frames = recordedFrames();
const fullText = recordedText(frames);
// role, then the first two content deltas.
const head = frames.slice(0, 3);
const headText = recordedText(head);

/** The case travels in the prompt, so the fake upstream knows how to answer each request. */
const promptFor = (kind: Kind, n: number) => `case ${kind} ${n}`;

function replyFor(req: RecordedRequest): UpstreamReply {
  const prompt = (req.json as { messages: { content: string }[] }).messages[0].content;
  const kind = prompt.split(' ')[1] as Kind;
  switch (kind) {
    case 'completed':
      return { pieces: frames, delayMs: 1 };
    case 'reset':
      return { pieces: head, delayMs: 1, after: 'reset' };
    case 'malformed':
      // Then silence: only sluice giving up can close this upstream request.
      return { pieces: [...head, 'data: {"choices":[{"delta":\n\n'], delayMs: 1, after: 'hang' };
    case 'idle':
      return { pieces: head, after: 'hang' };
    case 'overloaded':
      return {
        status: 503,
        headers: { 'content-type': 'application/json' },
        body: '{"error":{"message":"The server is overloaded","type":"server_error"}}',
      };
    case 'client-gone':
      return { pieces: frames.slice(0, 3), delayMs: 2, after: 'hang' };
  }
}

interface Seen {
  kind: Kind;
  requestId: string;
  text: string;
  /** The SDK's error code, or `http <status>` for an HTTP error before the stream. */
  error: string | null;
}

async function oneRequest(gw: TestGateway, kind: Kind, n: number): Promise<Seen> {
  const body = { ...streamRequest, messages: [{ role: 'user' as const, content: promptFor(kind, n) }] };
  let requestId = '';
  let text = '';
  try {
    const { data: stream, response } = await gw.client.chat.completions.create(body).withResponse();
    requestId = response.headers.get('x-request-id') ?? '';
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      // Leaving the loop closes the connection: the client is gone mid-stream.
      if (kind === 'client-gone' && text) break;
    }
    return { kind, requestId, text, error: null };
  } catch (err) {
    assert.ok(err instanceof APIError, `${kind}: ${String(err)}`);
    if (!requestId) {
      requestId = err.headers?.get('x-request-id') ?? '';
      return { kind, requestId, text, error: `http ${err.status}` };
    }
    return { kind, requestId, text, error: String(err.code) };
  }
}

/** What the client must have seen, and what the ledger must say, for each kind. */
const expected: Record<Kind, { text: string; error: string | null; outcome: LedgerRecord['outcome']; code: string | null }> = {
  completed: { text: fullText, error: null, outcome: 'ok', code: null },
  reset: { text: headText, error: 'upstream_connection_error', outcome: 'error', code: 'upstream_connection_error' },
  malformed: { text: headText, error: 'upstream_malformed_stream', outcome: 'error', code: 'upstream_malformed_stream' },
  idle: { text: headText, error: 'stream_idle_timeout', outcome: 'error', code: 'stream_idle_timeout' },
  // sluice's code; the upstream's own type (server_error) travels beside it.
  overloaded: { text: '', error: 'http 503', outcome: 'error', code: 'upstream_overloaded' },
  'client-gone': { text: recordedText(frames.slice(0, 2)), error: null, outcome: 'cancelled', code: 'cancelled' },
};

describe('mixed faults under concurrent load', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    upstream.reply(replyFor);
    gw = await startGateway({
      ...upstreamConfig(upstream.url),
      // The idle timer runs from the request's start: at 0.3 s a busy CI machine could fire it before
      // the upstream's first bytes (an HTTP 504 in place of the case's own ending). 1 s keeps every
      // case deterministic; only the idle case waits for it.
      stream: { heartbeat_s: 0, idle_timeout_s: 1, deadline_s: 10 },
      ledger: { flush_interval_ms: 20 },
    });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('every request ends as its case says, with one ledger record, no upstream request left open and no session left behind', async () => {
    const seen: Seen[] = [];
    let next = 0;
    const worker = async () => {
      for (let n = next++; n < REQUESTS; n = next++) seen.push(await oneRequest(gw, KINDS[n % KINDS.length], n));
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));

    assert.equal(seen.length, REQUESTS);
    assert.equal(upstream.requests.length, REQUESTS);
    for (const s of seen) {
      const want = expected[s.kind];
      assert.match(s.requestId, /^[0-9a-z]{8}[A-Za-z0-9_-]{12}$/, `${s.kind}: X-Request-ID`);
      assert.deepEqual({ kind: s.kind, text: s.text, error: s.error }, { kind: s.kind, text: want.text, error: want.error });
    }
    assert.equal(new Set(seen.map((s) => s.requestId)).size, REQUESTS, 'one id per request');

    // Every upstream request sluice gave up on (client gone, malformed chunk, idle) was closed by
    // sluice; the others ended on the upstream's side.
    const givenUp = seen.filter((s) => ['client-gone', 'malformed', 'idle'].includes(s.kind)).length;
    await until(() => upstream.closedEarly >= givenUp, `${givenUp} upstream requests closed by sluice`);
    assert.equal(upstream.closedEarly, givenUp);
    await until(() => gw.gateway.context.scopes.size === 0, 'every request scope released');

    const store = gw.gateway.context.ledgerStore;
    assert.ok(store);
    // Records reach the store in batches (every 20 ms here): poll, bounded.
    let records: LedgerRecord[] = [];
    for (let i = 0; i < 200 && records.length < REQUESTS; i++) {
      records = (await store.list({ limit: 1000 })).data;
      if (records.length < REQUESTS) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(records.length, REQUESTS, 'exactly one ledger record per request');
    const byId = new Map(records.map((r) => [r.requestId, r]));
    for (const s of seen) {
      const record = byId.get(s.requestId);
      assert.ok(record, `${s.kind} ${s.requestId}: a ledger record`);
      const want = expected[s.kind];
      assert.deepEqual(
        { kind: s.kind, outcome: record.outcome, code: record.errorCode, streamed: record.streamed },
        { kind: s.kind, outcome: want.outcome, code: want.code, streamed: true },
      );
      if (s.kind === 'completed') assert.equal(record.usageSource, 'provider');
    }
  });
});

import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { adminCall, projectWithKey } from '../helpers/admin-client.ts';
import { type FakeRealtimeUpstream, startFakeRealtimeUpstream } from '../helpers/realtime-upstream.ts';
import { startGateway, type TestGateway, upstreamConfig } from '../helpers/gateway.ts';
import { speakAsTestCallers } from './limits-support.ts';
import type { LedgerRecord } from '../../src/accounting/ledger-record.ts';

const MASTER = 'sk-sluice-realtime-master';
/** $4 a million tokens in, $16 out: a response of 100 in and 50 out costs $0.0012. */
const PRICING = { pricing: { 'up/gpt-realtime': { input_mtok: 4, output_mtok: 16 } } };

/** A client session against sluice: its events as they came, and the handshake's request id. */
interface Client {
  socket: WebSocket;
  events: { type: string; [key: string]: unknown }[];
  requestId: string;
  /** Resolves with the first event of `type` from now on (or already received past `from`). */
  next(type: string, from?: number): Promise<Record<string, unknown>>;
  closed: Promise<number>;
}

async function connect(gw: TestGateway, headers: Record<string, string>, path = '/v1/realtime?model=up/gpt-realtime', protocols: string[] = []) {
  const socket = new WebSocket(`${gw.url.replace('http', 'ws')}${path}`, protocols, { headers });
  const events: Client['events'] = [];
  let requestId = '';
  socket.on('upgrade', (res) => (requestId = String(res.headers['x-request-id'] ?? '')));
  socket.on('message', (data, isBinary) => {
    if (!isBinary) events.push(JSON.parse(String(data)) as Client['events'][number]);
  });
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const client: Client = {
    socket,
    events,
    get requestId() {
      return requestId;
    },
    async next(type, from = 0) {
      for (let waited = 0; waited < 5_000; waited += 10) {
        const found = events.slice(from).find((e) => e.type === type);
        if (found) return found;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`no ${type} event within 5 s; got ${events.map((e) => e.type).join(', ')}`);
    },
    closed,
  };
  return client;
}

/** The handshake refused: its HTTP status and body. */
function refused(gw: TestGateway, headers: Record<string, string>, path = '/v1/realtime?model=up/gpt-realtime') {
  const socket = new WebSocket(`${gw.url.replace('http', 'ws')}${path}`, { headers });
  return new Promise<{ status: number; body: Record<string, any> }>((resolve, reject) => {
    socket.on('unexpected-response', (_, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += String(c)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, any> }));
    });
    socket.on('open', () => reject(new Error('the upgrade was accepted')));
    socket.on('error', () => {});
  });
}

/** The rows the gateway's ledger stores from now on, by request id. */
function watchRows(gw: TestGateway): (requestId: string) => Promise<LedgerRecord> {
  const rows = new Map<string, LedgerRecord>();
  gw.gateway.context.accounting.ledger?.onWritten((records) => {
    for (const r of records) rows.set(r.requestId, r);
  });
  return async (requestId) => {
    for (let waited = 0; waited < 5_000; waited += 20) {
      const found = rows.get(requestId);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no ledger row for ${requestId}`);
  };
}

async function respond(client: Client): Promise<Record<string, unknown>> {
  const from = client.events.length;
  client.socket.send(JSON.stringify({ type: 'response.create', event_id: `ev_${from}` }));
  return client.next('response.done', from);
}

describe('GET /v1/realtime: the relay, the key, the row', () => {
  let upstream: FakeRealtimeUpstream;
  let gw: TestGateway;
  let row: (requestId: string) => Promise<LedgerRecord>;
  before(async () => {
    upstream = await startFakeRealtimeUpstream();
    gw = await startGateway({ ...upstreamConfig(upstream.url), ...PRICING, auth: { master_key: MASTER } });
    row = watchRows(gw);
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('relays events both ways, text and binary; the upstream sees the provider key, never the client key', async () => {
    const client = await connect(gw, { authorization: `Bearer ${MASTER}` });
    await client.next('session.created');
    const done = await respond(client);
    assert.equal((done.response as { status: string }).status, 'completed');
    assert.deepEqual(
      client.events.map((e) => e.type),
      ['session.created', 'response.created', 'response.output_text.delta', 'response.done'],
    );
    const echoed = new Promise<Buffer>((resolve) => client.socket.once('message', (data, isBinary) => isBinary && resolve(data as Buffer)));
    client.socket.send(Buffer.from([1, 2, 3, 255]), { binary: true });
    assert.deepEqual([...(await echoed)], [1, 2, 3, 255]);
    const seen = upstream.connections.at(-1)!;
    assert.equal(seen.url, '/v1/realtime?model=gpt-realtime');
    assert.equal(seen.headers.authorization, 'Bearer sk-upstream');
    assert.deepEqual([...seen.binary[0]], [1, 2, 3, 255]);
    assert.equal(seen.received[0].type, 'response.create');
    client.socket.close(1000);
    assert.equal(await client.closed, 1000);
  });

  it("a browser's key subprotocol is checked like a header, and not passed upstream", async () => {
    const client = await connect(gw, {}, undefined, ['realtime', `openai-insecure-api-key.${MASTER}`]);
    assert.equal(client.socket.protocol, 'realtime');
    await client.next('session.created');
    const seen = upstream.connections.at(-1)!;
    assert.equal(seen.headers.authorization, 'Bearer sk-upstream');
    assert.equal(seen.headers['sec-websocket-protocol'], 'realtime');
    client.socket.close();
    await client.closed;
  });

  it('a bad key is a 401 in OpenAI error JSON, and no upstream connection is opened', async () => {
    const before = upstream.connections.length;
    const answer = await refused(gw, { authorization: 'Bearer sk-wrong' });
    assert.equal(answer.status, 401);
    assert.equal(answer.body.error.type, 'authentication_error');
    assert.equal(upstream.connections.length, before);
  });

  it('a missing model is a 400 naming model; a provider without a Realtime API too', async () => {
    const missing = await refused(gw, { authorization: `Bearer ${MASTER}` }, '/v1/realtime');
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.param, 'model');
    const mock = await refused(gw, { authorization: `Bearer ${MASTER}` }, '/v1/realtime?model=mock/echo');
    assert.equal(mock.status, 400);
    assert.equal(mock.body.error.param, 'model');
    const unknown = await refused(gw, { authorization: `Bearer ${MASTER}` }, '/v1/nothing');
    assert.equal(unknown.status, 404);
  });

  it('a handshake ws cannot accept is a 400, and the upstream opened for it is closed', async () => {
    const before = upstream.connections.length;
    const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(`${gw.url}/v1/realtime?model=up/gpt-realtime`, {
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          authorization: `Bearer ${MASTER}`,
          'sec-websocket-version': '13',
          'sec-websocket-key': 'not a key',
        },
      });
      req.on('response', (r) => {
        let text = '';
        r.on('data', (c: Buffer) => (text += String(c)));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(res.status, 400);
    assert.match(res.text, /handshake was refused/);
    const opened = upstream.connections.slice(before);
    assert.equal(opened.length, 1, 'the upstream was opened before the handshake was checked');
    for (let waited = 0; opened.some((c) => c.socket.readyState !== c.socket.CLOSED) && waited < 5_000; waited += 20) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(opened.every((c) => c.socket.readyState === c.socket.CLOSED));
  });

  it("the session's row sums two responses' usage and cost when the client closes", async () => {
    upstream.usages = [
      { input_tokens: 100, output_tokens: 50, input_token_details: { cached_tokens: 20, audio_tokens: 30 } },
      { input_tokens: 200, output_tokens: 10, output_token_details: { audio_tokens: 5 } },
    ];
    const client = await connect(gw, { authorization: `Bearer ${MASTER}` });
    await client.next('session.created');
    await respond(client);
    await respond(client);
    client.socket.close(1000);
    const record = await row(client.requestId);
    assert.equal(record.surface, 'realtime');
    assert.equal(record.outcome, 'ok');
    assert.equal(record.finishReason, 'client_closed');
    assert.equal(record.inputTokens, 300);
    assert.equal(record.outputTokens, 60);
    assert.equal(record.cachedInputTokens, 20);
    // (80 + 20 cached at the input price) * $4/M + 50 * $16/M, then (200 * $4 + 10 * $16)/M.
    assert.equal(record.costUsd, 0.00216);
    assert.equal(record.audioInputTokens, 30);
    assert.equal(record.audioOutputTokens, 5);
    assert.equal(record.provider, 'up');
    assert.equal(record.model, 'gpt-realtime');
  });

  it("a project's endpoint serves its model without a `model`, to its project's keys only", async () => {
    const key = await projectWithKey(gw.url, MASTER, 'proj_rt');
    const other = await projectWithKey(gw.url, MASTER, 'proj_rt_other');
    const created = await adminCall(gw.url, MASTER, 'POST', '/admin/endpoints', { project: 'proj_rt', name: 'voice', model: 'up/gpt-realtime' });
    assert.equal(created.status, 201);
    const client = await connect(gw, { authorization: `Bearer ${key.key}` }, '/proj_rt/voice/v1/realtime');
    await client.next('session.created');
    assert.equal(upstream.connections.at(-1)!.url, '/v1/realtime?model=gpt-realtime');
    await respond(client);
    client.socket.close(1000);
    const record = await row(client.requestId);
    assert.equal(record.projectId, 'proj_rt');
    assert.equal(record.outcome, 'ok');
    const elsewhere = await refused(gw, { authorization: `Bearer ${other.key}` }, '/proj_rt/voice/v1/realtime');
    assert.equal(elsewhere.status, 404);
  });

  it('the upstream closing ends the client session and writes the row', async () => {
    upstream.usages = [{ input_tokens: 10, output_tokens: 10 }];
    const client = await connect(gw, { authorization: `Bearer ${MASTER}` });
    await client.next('session.created');
    await respond(client);
    upstream.connections.at(-1)!.socket.close(1000, 'bye');
    assert.equal(await client.closed, 1000);
    const record = await row(client.requestId);
    assert.equal(record.outcome, 'ok');
    assert.equal(record.finishReason, 'upstream_closed');
    assert.equal(record.inputTokens, 10);
  });
});

describe('GET /v1/realtime: budgets and shutdown', () => {
  let upstream: FakeRealtimeUpstream;
  let gw: TestGateway;
  let row: (requestId: string) => Promise<LedgerRecord>;
  before(async () => {
    upstream = await startFakeRealtimeUpstream();
    gw = await startGateway({
      ...upstreamConfig(upstream.url),
      // $0.001 a token: a budget of $0.05 pays for about one response of 40 tokens.
      pricing: { 'up/gpt-realtime': { input_mtok: 1000, output_mtok: 1000 } },
      limits: { reserve_output_tokens: 10 },
      tiers: { free: { budgets: [{ period: 'day', limit_usd: 0.05 }] } },
    });
    speakAsTestCallers(gw);
    row = watchRows(gw);
  });
  after(async () => {
    await upstream.close();
  });

  it('a spent budget answers the next response.create with insufficient_quota instead of forwarding it', async () => {
    upstream.usages = [{ input_tokens: 30, output_tokens: 30 }];
    const client = await connect(gw, { 'x-test-key': 'k1', 'x-test-tier': 'free' });
    await client.next('session.created');
    await respond(client);
    const forwarded = upstream.connections.at(-1)!.received.length;
    const from = client.events.length;
    client.socket.send(JSON.stringify({ type: 'response.create', event_id: 'ev_refused' }));
    const error = (await client.next('error', from)) as { error: { code: string; event_id: string } };
    assert.equal(error.error.code, 'insufficient_quota');
    assert.equal(error.error.event_id, 'ev_refused');
    assert.equal(upstream.connections.at(-1)!.received.length, forwarded);
    client.socket.close(1000);
    const record = await row(client.requestId);
    assert.equal(record.finishReason, 'budget_exhausted');
    assert.equal(record.costUsd, 0.06);
  });

  it('shutdown closes an open session with 1001 and writes its row', async () => {
    const client = await connect(gw, { 'x-test-key': 'k2', 'x-test-tier': 'free' });
    await client.next('session.created');
    await gw.gateway.shutdown(0);
    assert.equal(await client.closed, 1001);
    const record = await row(client.requestId);
    assert.equal(record.outcome, 'cancelled');
    assert.equal(record.finishReason, 'shutdown');
  });
});

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { chatStream } from '../helpers/check-streams.ts';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { rawStream, startGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * The ledger export (docs/operations/analytics-export.md): every stored ledger row copied to an
 * OTLP/HTTP collector as a log record. Against a collector stub on 127.0.0.1 that reads the JSON
 * bodies, one that is absent (connection refused) and one that accepts and never answers: the
 * responses never wait for it, every ledger row is stored, and what could not go is counted.
 */

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values: OtlpValue[] };
}
interface OtlpLogRecord {
  timeUnixNano: string;
  severityNumber: number;
  severityText: string;
  eventName?: string;
  body?: OtlpValue;
  attributes: { key: string; value: OtlpValue }[];
}
interface Received {
  resource: Record<string, unknown>;
  scope: string;
  record: OtlpLogRecord;
  attributes: Record<string, unknown>;
}

function plain(v: OtlpValue): unknown {
  if (v.arrayValue) return v.arrayValue.values.map(plain);
  return v.stringValue ?? v.boolValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.doubleValue);
}
const attrs = (list: { key: string; value: OtlpValue }[]) => Object.fromEntries(list.map((a) => [a.key, plain(a.value)]));

/** A collector: `answer` says how (ok, or a status), `hang` never answers (the sockets are kept to end them). */
async function startCollector(mode: 'ok' | 'hang') {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  let posts = 0;
  const server: Server = createServer(async (req, res) => {
    posts++;
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (mode === 'hang') return;
    if (req.method === 'POST' && req.url === '/v1/logs') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const rl of body.resourceLogs ?? []) {
        for (const sl of rl.scopeLogs ?? []) {
          for (const record of sl.logRecords ?? []) {
            received.push({ resource: attrs(rl.resource.attributes), scope: sl.scope.name, record, attributes: attrs(record.attributes) });
          }
        }
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/logs`,
    received,
    posts: () => posts,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A loopback port with nothing listening on it: connections are refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** sluice_log_export_* from the gateway's registry. */
async function exportCounts(gw: TestGateway) {
  const text = (await gw.gateway.context.metrics?.registry.metrics()) ?? '';
  const value = (line: string) => Number(new RegExp(`^${line} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    exported: value('sluice_log_export_exported_total'),
    queueFull: value('sluice_log_export_dropped_total\\{reason="queue_full"\\}'),
    failed: value('sluice_log_export_dropped_total\\{reason="export_failed"\\}'),
  };
}

/** `n` streamed requests, one after another: each one's wall time, and its request id. */
async function streamRequests(gw: TestGateway, n: number, content = 'hello'): Promise<{ ms: number; id: string }[]> {
  const done: { ms: number; id: string }[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const res = await rawStream(gw.url, { model: 'up/m-1', stream: true, messages: [{ role: 'user', content }] });
    assert.equal(res.status, 200);
    assert.match(res.text, /data: \[DONE\]/);
    done.push({ ms: performance.now() - started, id: res.headers.get('x-request-id') ?? '' });
  }
  return done;
}

async function storedRows(gw: TestGateway, ids: readonly string[]): Promise<number> {
  let found = 0;
  for (const id of ids) if (await gw.gateway.context.ledgerStore?.get(id)) found++;
  return found;
}

function gatewayConfig(upstream: FakeUpstream, exportSection: Record<string, unknown>, ledger: Record<string, unknown> = {}) {
  return {
    providers: { up: { base_url: `${upstream.url}/v1`, api_key: 'sk-up' } },
    ledger: { flush_interval_ms: 20, ...ledger, export: exportSection },
  };
}

describe('ledger export: OTLP/HTTP log records', () => {
  let up: FakeUpstream;

  before(async () => {
    up = await startFakeUpstream();
    up.reply({ body: chatStream().join('') });
  });
  after(() => up.close());

  it('sends a streamed request’s row with the GenAI and sluice attributes, after the row is stored', async () => {
    const collector = await startCollector('ok');
    const gw = await startGateway(gatewayConfig(up, { endpoint: collector.url, flush_interval_ms: 50, content: true }, { store_content: true }), {
      OTEL_SERVICE_NAME: 'sluice-test',
    });
    try {
      const [{ id }] = await streamRequests(gw, 1, 'the prompt 5c1d');
      await until('the log record', () => collector.received.length === 1);
      const row = await gw.gateway.context.ledgerStore?.get(id);
      assert.ok(row, 'the ledger row is stored');
      const { resource, scope, record, attributes: a } = collector.received[0];
      assert.equal(resource['service.name'], 'sluice-test');
      assert.equal(scope, 'sluice');
      assert.equal(record.eventName, 'sluice.request');
      assert.equal(record.severityText, 'INFO');
      assert.equal(BigInt(record.timeUnixNano) / 1_000_000n, BigInt(row.createdAt));
      assert.deepEqual(
        {
          operation: a['gen_ai.operation.name'],
          provider: a['gen_ai.provider.name'],
          requestModel: a['gen_ai.request.model'],
          responseModel: a['gen_ai.response.model'],
          stream: a['gen_ai.request.stream'],
          responseId: a['gen_ai.response.id'],
          finish: a['gen_ai.response.finish_reasons'],
          input: a['gen_ai.usage.input_tokens'],
          output: a['gen_ai.usage.output_tokens'],
          requestId: a['sluice.request_id'],
          surface: a['sluice.surface'],
          outcome: a['sluice.outcome'],
          latency: a['sluice.latency_ms'],
          ttft: a['sluice.ttft_ms'],
          cost: a['sluice.cost_usd'],
          prompt: a['sluice.prompt'],
          completion: a['sluice.completion'],
        },
        {
          operation: 'chat',
          provider: 'up',
          requestModel: 'up/m-1',
          responseModel: 'm-1',
          stream: true,
          responseId: `chatcmpl-${id}`,
          finish: ['stop'],
          input: 3,
          output: 2,
          requestId: id,
          surface: 'chat',
          outcome: 'ok',
          latency: row.latencyMs,
          ttft: row.ttftMs,
          cost: row.costUsd,
          prompt: 'the prompt 5c1d',
          completion: 'Hello',
        },
      );
      assert.ok(typeof a['gen_ai.response.time_to_first_chunk'] === 'number');
      assert.equal(a['error.type'], undefined);
      assert.deepEqual(await exportCounts(gw), { exported: 1, queueFull: 0, failed: 0 });
    } finally {
      await gw.close();
      await collector.close();
    }
  });

  it('leaves responses and the ledger alone when the collector is absent, and counts the failed exports', async () => {
    const port = await closedPort();
    const endpoint = `http://127.0.0.1:${port}/v1/logs`;
    const gw = await startGateway(gatewayConfig(up, { endpoint, flush_interval_ms: 20, timeout_ms: 300 }));
    try {
      const done = await streamRequests(gw, 12);
      const slowest = Math.max(...done.map((d) => d.ms));
      assert.ok(slowest < 1_000, `a response took ${slowest.toFixed(0)} ms`);
      await until(
        'every row stored',
        async () =>
          (await storedRows(
            gw,
            done.map((d) => d.id),
          )) === 12,
      );
      await until('every export failed', async () => (await exportCounts(gw)).failed === 12);
      assert.deepEqual(await exportCounts(gw), { exported: 0, queueFull: 0, failed: 12 });
      assert.ok(
        gw.logs.some((line) => line.includes('ledger export: an export of')),
        'the failure is logged',
      );
    } finally {
      await gw.close();
    }
  });

  it('keeps responses fast and the queue bounded while the collector hangs; shutdown does not wait for it', async () => {
    const collector = await startCollector('hang');
    const gw = await startGateway(
      gatewayConfig(up, { endpoint: collector.url, batch_size: 2, max_queue: 4, flush_interval_ms: 20, timeout_ms: 2_000 }),
    );
    try {
      const done = await streamRequests(gw, 30);
      const slowest = Math.max(...done.map((d) => d.ms));
      assert.ok(slowest < 1_000, `a response took ${slowest.toFixed(0)} ms`);
      await until(
        'every row stored',
        async () =>
          (await storedRows(
            gw,
            done.map((d) => d.id),
          )) === 30,
      );
      await until('the queue to fill', async () => (await exportCounts(gw)).queueFull > 0);
      assert.ok(collector.posts() >= 1, 'the collector was reached');
      const counts = await exportCounts(gw);
      assert.equal(counts.exported, 0);
      // At most the queue (4) and the export in flight (2) wait for the collector; the rest is
      // dropped, at the queue, or with an export that timed out (2 s) while the requests ran.
      assert.ok(counts.queueFull + counts.failed >= 30 - 4 - 2, JSON.stringify(counts));
      const closing = performance.now();
      await gw.close();
      assert.ok(performance.now() - closing < 5_000, 'shutdown is bounded by the export timeout');
      const final = await exportCounts(gw);
      assert.equal(final.queueFull + final.failed, 30, 'every row is either exported or counted as dropped');
    } finally {
      await collector.close();
      if (gw.gateway.server.listening) await gw.close();
    }
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FakeUpstream, type RecordedRequest, startFakeUpstream, type UpstreamReply } from '../helpers/fake-upstream.ts';
import { chatWith, projectWithKey } from '../helpers/admin-client.ts';
import { openAIStreamBody } from '../helpers/fixtures.ts';
import { rawStream, startGateway, type TestGateway } from '../helpers/gateway.ts';

const MASTER = 'sk-master-telemetry';
const PROMPT = 'a prompt that must never reach the log: zebra-7731';
const auth = { authorization: `Bearer ${MASTER}` };

/** One chat completion, not streamed: 10 tokens in, 2 out. */
function completion(model: string): UpstreamReply {
  return {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
    }),
  };
}

/** `up/broken` answers 500; a streamed request gets a recording (364 tokens in, 40 out); others a completion. */
function upstreamReplies(req: RecordedRequest): UpstreamReply {
  const body = req.json as { model: string; stream?: boolean };
  if (body.model === 'broken') {
    return { status: 500, headers: { 'content-type': 'application/json' }, body: '{"error":{"message":"down","type":"server_error"}}' };
  }
  if (body.stream) return { body: openAIStreamBody('openai-chat/gpt4o-parallel-tool-calls.sse') };
  return completion(body.model);
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus' text format, the sample lines only. */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)) labels[name] = value;
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

/** The one sample of `name` whose labels include `labels`. */
function sample(samples: Sample[], name: string, labels: Record<string, string>): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value;
}

async function scrape(url: string, headers: Record<string, string> = auth): Promise<Sample[]> {
  const res = await fetch(`${url}/metrics`, { headers });
  assert.equal(res.status, 200, await res.clone().text());
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parseMetrics(await res.text());
}

/** GET /v1/requests/{id} with the master key (the request log reads its writes). */
async function requestRecord(gw: TestGateway, requestId: string): Promise<Record<string, any>> {
  const res = await fetch(`${gw.url}/v1/requests/${requestId}`, { headers: auth });
  assert.equal(res.status, 200, `no ledger record for ${requestId}`);
  return (await res.json()) as Record<string, any>;
}

async function chat(url: string, model: string, extra: Record<string, unknown> = {}) {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: PROMPT }], ...extra }),
  });
  await res.text();
  return res;
}

describe('metrics, the overhead header and the request log line', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;

  before(async () => {
    upstream = await startFakeUpstream();
    upstream.reply(upstreamReplies);
    gw = await startGateway({
      auth: { master_key: MASTER },
      ledger: { flush_interval_ms: 10 },
      providers: { up: { base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' } },
      pricing: { 'up/gpt-4o': { input_mtok: 2.5, output_mtok: 10 } },
      routes: { steady: { targets: [{ model: 'up/broken' }, { model: 'up/gpt-4o' }] } },
    });
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  it('counts requests, tokens, cost, errors, attempts and fallbacks, with TTFT and latency histograms', async () => {
    const streamed = await rawStream(gw.url, { model: 'up/gpt-4o', messages: [{ role: 'user', content: PROMPT }], stream: true }, auth);
    assert.equal(streamed.status, 200);
    assert.equal((await chat(gw.url, 'up/gpt-4o')).status, 200);
    assert.equal((await chat(gw.url, 'up/broken')).status, 502);
    assert.equal((await chat(gw.url, 'steady')).status, 200);

    const m = await scrape(gw.url);
    const ok = { provider: 'up', model: 'gpt-4o', surface: 'chat', outcome: 'ok', project: '' };
    assert.equal(sample(m, 'sluice_requests_total', ok), 3);
    assert.equal(sample(m, 'sluice_requests_total', { ...ok, model: 'broken', outcome: 'error' }), 1);
    const tokens = { provider: 'up', model: 'gpt-4o', surface: 'chat', project: '' };
    assert.equal(sample(m, 'sluice_tokens_total', { ...tokens, kind: 'input' }), 364 + 10 + 10);
    assert.equal(sample(m, 'sluice_tokens_total', { ...tokens, kind: 'output' }), 40 + 2 + 2);
    const cost = sample(m, 'sluice_cost_usd_total', tokens) ?? 0;
    assert.ok(Math.abs(cost - (384 * 2.5 + 44 * 10) / 1e6) < 1e-12, `cost ${cost}`);
    assert.equal(sample(m, 'sluice_errors_total', { model: 'broken', type: 'upstream_error', code: 'upstream_error' }), 1);
    const latency = { provider: 'up', model: 'gpt-4o', surface: 'chat', outcome: 'ok' };
    assert.equal(sample(m, 'sluice_request_duration_seconds_count', latency), 3);
    assert.equal(sample(m, 'sluice_request_duration_seconds_bucket', { ...latency, le: '+Inf' }), 3);
    assert.equal(sample(m, 'sluice_time_to_first_token_seconds_count', { provider: 'up', model: 'gpt-4o', surface: 'chat' }), 3);
    // The route tried up/broken (500, a fallback) then up/gpt-4o; the direct requests are one attempt each.
    assert.equal(sample(m, 'sluice_upstream_attempts_total', { provider: 'up', model: 'gpt-4o', result: 'ok' }), 3);
    assert.equal(sample(m, 'sluice_upstream_attempts_total', { provider: 'up', model: 'broken', result: 'upstream_error' }), 2);
    assert.equal(sample(m, 'sluice_fallbacks_total', { provider: 'up', model: 'broken', reason: 'upstream_error' }), 1);
    assert.equal(sample(m, 'sluice_open_streams', {}), 0);
    assert.equal(sample(m, 'sluice_ledger_write_failures', { kind: 'failures' }), 0);
    assert.equal(typeof sample(m, 'sluice_ledger_queue_depth', {}), 'number');
    // No label carries a request id or a key.
    const ids = new Set(m.flatMap((s) => Object.values(s.labels)));
    for (const value of ids) assert.ok(!value.startsWith('req_') && !value.includes(MASTER), value);
  });

  it("serves the process's and Node's runtime metrics beside sluice's own", async () => {
    const m = await scrape(gw.url);
    assert.ok((sample(m, 'process_resident_memory_bytes', {}) ?? 0) > 10e6, 'resident memory');
    assert.ok((sample(m, 'process_cpu_seconds_total', {}) ?? 0) > 0, 'CPU seconds');
    assert.equal(typeof sample(m, 'nodejs_eventloop_lag_seconds', {}), 'number');
    assert.ok(
      m.some((s) => s.name === 'nodejs_heap_space_size_used_bytes'),
      'heap spaces',
    );
  });

  it('gives every response its overhead, the same figure as the ledger for a response sent whole', async () => {
    const res = await chat(gw.url, 'up/gpt-4o');
    const header = Number(res.headers.get('x-sluice-overhead-ms'));
    assert.ok(Number.isFinite(header) && header >= 0, `x-sluice-overhead-ms: ${res.headers.get('x-sluice-overhead-ms')}`);
    const record = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.ok(Math.abs(record.overhead_ms - header) <= 0.01, `ledger ${record.overhead_ms}, header ${header}`);

    const streamed = await rawStream(gw.url, { model: 'up/gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true }, auth);
    assert.ok(Number(streamed.headers.get('x-sluice-overhead-ms')) >= 0);
    const refused = await chat(gw.url, 'up/gpt-4o', { temperature: 'hot' });
    assert.equal(refused.status, 400);
    assert.ok(Number(refused.headers.get('x-sluice-overhead-ms')) >= 0);
  });

  it('logs one JSON line per request with its figures, never the prompt', async () => {
    const res = await chat(gw.url, 'up/gpt-4o');
    const requestId = res.headers.get('x-request-id');
    await requestRecord(gw, requestId ?? ''); // the line is written with the record
    const lines = gw.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    const line = lines.find((l) => l.msg === 'request' && l.request_id === requestId);
    assert.ok(line, `no request line for ${requestId}`);
    assert.equal(line.level, 30);
    assert.equal(line.provider, 'up');
    assert.equal(line.model, 'gpt-4o');
    assert.equal(line.upstream_status, 200);
    assert.equal(line.outcome, 'ok');
    assert.equal(line.input_tokens, 10);
    assert.equal(line.output_tokens, 2);
    assert.ok((line.cost_usd as number) > 0);
    assert.equal(typeof line.latency_ms, 'number');
    assert.equal(typeof line.overhead_ms, 'number');
    assert.ok('ttft_ms' in line);
    const failed = lines.find((l) => l.msg === 'request' && l.model === 'broken');
    assert.equal(failed?.level, 40);
    assert.ok(lines.some((l) => l.msg === 'sluice listening' && Array.isArray(l.providers)));
    const all = gw.logs.join('');
    assert.ok(!all.includes('zebra-7731'), 'the prompt is in the log');
    assert.ok(!all.includes(MASTER) && !all.includes('sk-upstream'), 'a key is in the log');
  });

  it('counts a stream as open while it is being sent', async () => {
    const first =
      'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"}}]}\n\n';
    upstream.reply({ body: first, after: 'hang' });
    const controller = new AbortController();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ model: 'up/gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read(); // the stream has started
    assert.equal(sample(await scrape(gw.url), 'sluice_open_streams', {}), 1);
    controller.abort();
    await reader.cancel().catch(() => {});
    let open: number | undefined = 1;
    for (let i = 0; i < 100 && open !== 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      open = sample(await scrape(gw.url), 'sluice_open_streams', {});
    }
    assert.equal(open, 0);
    upstream.reply(upstreamReplies);
  });

  it("serves /metrics to the master key and admin keys only; a project key's requests carry its project", async () => {
    assert.equal((await fetch(`${gw.url}/metrics`)).status, 401);
    const keyed = await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer sk-wrong' } });
    assert.equal(keyed.status, 401);
    const member = await projectWithKey(gw.url, MASTER, 'p1');
    assert.equal((await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${member.key}` } })).status, 403);
    const admin = await projectWithKey(gw.url, MASTER, 'ops', { admin: true });
    const m = await scrape(gw.url, { authorization: `Bearer ${admin.key}` });
    assert.equal(sample(m, 'sluice_requests_total', { model: 'gpt-4o', outcome: 'ok', project: 'p1' }), undefined);
    assert.equal((await chatWith(gw.url, member.key, { model: 'up/gpt-4o' })).status, 200);
    const after = await scrape(gw.url);
    assert.equal(sample(after, 'sluice_requests_total', { model: 'gpt-4o', outcome: 'ok', project: 'p1' }), 1);
    assert.ok(member.id);
    for (const s of after) assert.ok(!Object.values(s.labels).some((v) => v.includes(member.id)), `${s.name} carries the key id`);
  });
});

describe('metrics labels stay bounded', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;

  before(async () => {
    upstream = await startFakeUpstream();
    upstream.reply(upstreamReplies);
    gw = await startGateway({
      auth: { master_key: MASTER },
      metrics: { public: true, max_label_values: 2 },
      providers: { up: { base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' } },
    });
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  it('counts unpriced models past the bound as other, and is open when metrics.public is set', async () => {
    for (const model of ['m1', 'm2', 'm3', 'm4', 'm1']) assert.equal((await chat(gw.url, `up/${model}`)).status, 200);
    const m = await scrape(gw.url, {});
    const requests = m.filter((s) => s.name === 'sluice_requests_total');
    assert.deepEqual(requests.map((s) => s.labels.model).sort(), ['m1', 'm2', 'other']);
    assert.equal(sample(m, 'sluice_requests_total', { model: 'm1' }), 2);
    assert.equal(sample(m, 'sluice_requests_total', { model: 'other' }), 2);
  });
});

describe('metrics switched off', () => {
  it('has no /metrics route', async () => {
    const gw = await startGateway({ metrics: { enabled: false } });
    try {
      const res = await fetch(`${gw.url}/metrics`);
      assert.equal(res.status, 404);
    } finally {
      await gw.close();
    }
  });
});

describe('issue 25 defect 8: log injection', () => {
  // A model name as a client may send it: a terminal colour, then a line of its own making.
  const hostile = 'gpt\u001b[31m-red\n{"level":30,"msg":"request","outcome":"ok","forged":true}\u009b2J';
  for (const format of ['json', 'pretty'] as const) {
    it(`log injection: with log.format ${format}, a model name's escapes and forged line are written escaped, on the request's one line`, async () => {
      const gw = await startGateway({ log: { format } });
      try {
        const res = await rawStream(gw.url, { model: hostile, messages: [{ role: 'user', content: 'hi' }] });
        assert.equal(res.status, 404);
        await requestRecord(gw, res.headers.get('x-request-id') ?? '');
        const all = gw.logs.join('');
        const raw = Array.from({ length: all.length }, (_, i) => all.charCodeAt(i)).filter(
          (c) => (c < 0x20 && c !== 0x0a) || (c >= 0x7f && c <= 0x9f),
        );
        assert.deepEqual(raw, [], 'raw control characters in the log');
        const lines = all.split('\n').filter((line) => line.includes('forged'));
        assert.equal(lines.length, 1, all);
        assert.ok(!lines[0].startsWith('{"level":30,"msg":"request","outcome":"ok"'));
        if (format === 'json') assert.equal((JSON.parse(lines[0]) as { requested_model: string }).requested_model, hostile);
        else assert.match(lines[0], /WARN {2}request {2}.* requested_model="gpt\\u001b\[31m-red\\n\{\\"level\\":30,.*\\u009b2J"/);
      } finally {
        await gw.close();
      }
    });
  }
});

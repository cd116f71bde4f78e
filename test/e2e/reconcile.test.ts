import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { LedgerRecord } from '../../src/accounting/ledger-record.ts';
import { type FakeUpstream, type RecordedRequest, startFakeUpstream, type UpstreamReply } from '../helpers/fake-upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { ledgerRecord } from '../helpers/ledger-records.ts';

const bin = fileURLToPath(new URL('../../bin/sluice.js', import.meta.url));
const cwd = mkdtempSync(join(tmpdir(), 'sluice-reconcile-'));
after(() => rmSync(cwd, { recursive: true, force: true }));

const MASTER = 'sk-master-reconcile';
const OPENAI_ADMIN = 'sk-admin-openai-secret';
const ANTHROPIC_ADMIN = 'sk-ant-admin-secret';
const OPENROUTER_KEY = 'sk-or-secret';
const [D1, D2, D3] = ['2026-11-01', '2026-11-02', '2026-11-03'];
const at = (day: string, hour = 12) => Date.parse(`${day}T${String(hour).padStart(2, '0')}:00:00Z`);
const sec = (day: string) => at(day, 0) / 1000;
/** Held back before each generation's answer: a run that is surely still going when another starts. */
let generationDelayMs = 0;
const json = (body: unknown, status = 200): UpstreamReply => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/**
 * The report APIs as their references document them (OpenAI's organization usage and costs,
 * Anthropic's Admin API usage and cost reports, OpenRouter's generation record), with drift
 * injected: OpenAI's output tokens on D2 and its cost on D3, a model sluice has no price for,
 * a day missing from Anthropic's report, a generation OpenRouter does not know.
 */
function reports(req: RecordedRequest): UpstreamReply {
  const url = new URL(req.url, 'http://fake');
  const auth = req.headers.authorization ?? req.headers['x-api-key'];
  if (url.pathname === '/v1/organization/usage/completions') {
    if (auth !== `Bearer ${OPENAI_ADMIN}`) return json({ error: { message: 'Invalid admin key', type: 'invalid_request_error' } }, 401);
    const usage = (model: string, key: string, input: number, cached: number, output: number) => ({
      object: 'organization.usage.completions.result',
      input_tokens: input,
      input_cached_tokens: cached,
      output_tokens: output,
      num_model_requests: 1,
      project_id: null,
      user_id: null,
      api_key_id: key,
      model,
      batch: null,
    });
    const bucket = (day: string, results: unknown[]) => ({ object: 'bucket', start_time: sec(day), end_time: sec(day) + 86_400, results });
    // Two pages: the second is asked for with the first's next_page.
    if (url.searchParams.get('page') === 'page_2') {
      return json({
        object: 'page',
        data: [bucket(D3, [usage('gpt-4o-mini-2024-07-18', 'key_a', 2000, 0, 1000)])],
        has_more: false,
        next_page: null,
      });
    }
    return json({
      object: 'page',
      data: [
        bucket(D1, [
          usage('gpt-4o-mini-2024-07-18', 'key_a', 600, 100, 300),
          usage('gpt-4o-mini-2024-07-18', 'key_b', 400, 100, 200),
          usage('o9-preview', 'key_a', 50, 0, 20),
        ]),
        bucket(D2, [usage('gpt-4o-mini-2024-07-18', 'key_a', 1000, 0, 800)]),
      ],
      has_more: true,
      next_page: 'page_2',
    });
  }
  if (url.pathname === '/v1/organization/costs') {
    const cost = (item: string, value: number) => ({
      object: 'organization.costs.result',
      amount: { value, currency: 'usd' },
      line_item: item,
      project_id: null,
    });
    const bucket = (day: string, results: unknown[]) => ({ object: 'bucket', start_time: sec(day), end_time: sec(day) + 86_400, results });
    return json({
      object: 'page',
      data: [
        bucket(D1, [cost('gpt-4o-mini-2024-07-18, input', 0.5), cost('gpt-4o-mini-2024-07-18, output', 0.5), cost('o9-preview, input', 0.75)]),
        bucket(D2, [cost('gpt-4o-mini-2024-07-18, input', 1)]),
        bucket(D3, [cost('gpt-4o-mini-2024-07-18, input', 3)]),
      ],
      has_more: false,
      next_page: null,
    });
  }
  if (url.pathname === '/v1/organizations/usage_report/messages') {
    if (auth !== ANTHROPIC_ADMIN || req.headers['anthropic-version'] !== '2023-06-01')
      return json({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }, 401);
    return json({
      data: [
        {
          starting_at: `${D1}T00:00:00Z`,
          ending_at: `${D2}T00:00:00Z`,
          results: [
            {
              uncached_input_tokens: 700,
              cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 100 },
              cache_read_input_tokens: 200,
              output_tokens: 400,
              server_tool_use: { web_search_requests: 0 },
              api_key_id: 'apikey_01',
              workspace_id: null,
              model: 'claude-sonnet-4-20250514',
              service_tier: 'standard',
              context_window: '0-200k',
            },
          ],
        },
        { starting_at: `${D2}T00:00:00Z`, ending_at: `${D3}T00:00:00Z`, results: [] },
      ],
      has_more: false,
      next_page: null,
    });
  }
  if (url.pathname === '/v1/organizations/cost_report') {
    return json({
      data: [
        {
          starting_at: `${D1}T00:00:00Z`,
          ending_at: `${D2}T00:00:00Z`,
          results: [
            {
              currency: 'USD',
              amount: '150.00',
              workspace_id: null,
              description: 'Claude Sonnet 4 Usage - Input Tokens',
              cost_type: 'tokens',
              context_window: '0-200k',
              model: 'claude-sonnet-4-20250514',
              service_tier: 'standard',
              token_type: 'uncached_input_tokens',
            },
            {
              currency: 'USD',
              amount: '40.00',
              workspace_id: null,
              description: 'Web search',
              cost_type: 'web_search',
              context_window: null,
              model: null,
              service_tier: null,
              token_type: null,
            },
          ],
        },
      ],
      has_more: false,
      next_page: null,
    });
  }
  if (url.pathname === '/api/v1/generation') {
    if (auth !== `Bearer ${OPENROUTER_KEY}`) return json({ error: { code: 401, message: 'No auth credentials found' } }, 401);
    const id = url.searchParams.get('id');
    const generation = (cost: number, prompt: number, cached: number, completion: number) =>
      json({
        data: {
          id,
          upstream_id: 'chatcmpl-1',
          total_cost: cost,
          cache_discount: null,
          created_at: `${D1}T10:00:00.000000+00:00`,
          model: 'openai/gpt-4o-mini',
          streamed: true,
          cancelled: false,
          provider_name: 'OpenAI',
          tokens_prompt: prompt,
          tokens_completion: completion,
          native_tokens_prompt: prompt,
          native_tokens_completion: completion,
          native_tokens_cached: cached,
          native_tokens_reasoning: 0,
          finish_reason: 'stop',
        },
      });
    if (id === 'gen-1') return { ...generation(0.001, 100, 20, 50), headerDelayMs: generationDelayMs };
    if (id === 'gen-2') return { ...generation(0.002, 200, 0, 100), headerDelayMs: generationDelayMs };
    return json({ error: { code: 404, message: 'Generation not found' } }, 404);
  }
  return json({ error: { message: `no route ${url.pathname}` } }, 404);
}

describe('reconciliation against the providers’ reports', () => {
  let gw: TestGateway;
  let fake: FakeUpstream;
  let n = 0;
  const write = (over: Partial<LedgerRecord>) => gw.gateway.context.accounting.ledger!.write(ledgerRecord({ requestId: `req_rec_${n++}`, ...over }));
  const api = (path: string, body?: unknown) =>
    fetch(`${gw.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  before(async () => {
    fake = await startFakeUpstream();
    fake.reply(reports);
    gw = await startGateway({
      auth: { master_key: MASTER },
      reconcile: {
        providers: {
          openai: { report: 'openai', admin_key: OPENAI_ADMIN, base_url: fake.url },
          anthropic: { report: 'anthropic', admin_key: ANTHROPIC_ADMIN, base_url: fake.url },
          openrouter: { report: 'openrouter', admin_key: OPENROUTER_KEY, base_url: fake.url },
          broken: { report: 'openai', admin_key: 'sk-admin-wrong-secret', base_url: fake.url },
        },
        threshold: { relative: 0.02, absolute_usd: 0.01 },
      },
    });
    // OpenAI: D1 matches (two ledger rows against two keys' rows), D2 is short of output tokens,
    // D3 is short of cost; o9-preview has no price in the registry.
    write({
      provider: 'openai',
      model: 'gpt-4o-mini',
      createdAt: at(D1, 9),
      inputTokens: 500,
      cachedInputTokens: 100,
      outputTokens: 250,
      costUsd: 0.5,
    });
    write({
      provider: 'openai',
      model: 'gpt-4o-mini',
      createdAt: at(D1, 15),
      inputTokens: 500,
      cachedInputTokens: 100,
      outputTokens: 250,
      costUsd: 0.5,
    });
    write({ provider: 'openai', model: 'o9-preview', createdAt: at(D1), inputTokens: 50, outputTokens: 20, costUsd: 0, priceKnown: false });
    write({ provider: 'openai', model: 'gpt-4o-mini', createdAt: at(D2), inputTokens: 1000, outputTokens: 700, costUsd: 1 });
    write({ provider: 'openai', model: 'gpt-4o-mini', createdAt: at(D3), inputTokens: 2000, outputTokens: 1000, costUsd: 2 });
    // Not the provider's usage: another provider's row, an MCP tool call.
    write({ provider: 'other', model: 'gpt-4o-mini', createdAt: at(D1), costUsd: 9 });
    write({ provider: 'openai', model: 'search', surface: 'mcp', createdAt: at(D1), inputTokens: 0, outputTokens: 0, costUsd: 0 });
    // Anthropic: D1 matches; D2 is in the ledger only.
    write({
      provider: 'anthropic',
      model: 'claude-sonnet-4-20250514',
      createdAt: at(D1),
      inputTokens: 1000,
      cachedInputTokens: 200,
      cacheWriteTokens: 100,
      outputTokens: 400,
      costUsd: 1.5,
    });
    write({ provider: 'anthropic', model: 'claude-sonnet-4-20250514', createdAt: at(D2), inputTokens: 10, outputTokens: 10, costUsd: 0.2 });
    // OpenRouter: joined on the upstream ids; gen-3 is unknown to it.
    write({
      provider: 'openrouter',
      model: 'openai/gpt-4o-mini',
      createdAt: at(D1, 10),
      upstreamRequestId: 'gen-1',
      inputTokens: 100,
      cachedInputTokens: 20,
      outputTokens: 50,
      costUsd: 0.001,
    });
    write({
      provider: 'openrouter',
      model: 'openai/gpt-4o-mini',
      createdAt: at(D1, 11),
      upstreamRequestId: 'gen-2',
      inputTokens: 200,
      outputTokens: 100,
      costUsd: 0.002,
    });
    write({
      provider: 'openrouter',
      model: 'openai/gpt-4o-mini',
      createdAt: at(D2, 11),
      upstreamRequestId: 'gen-3',
      inputTokens: 5,
      outputTokens: 5,
      costUsd: 0.0001,
    });
    await gw.gateway.context.accounting.ledger!.flush();
  });
  after(async () => {
    await gw?.close();
    await fake?.close();
  });

  function sluice(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const env = { PATH: process.env.PATH ?? '', SLUICE_URL: gw.url, SLUICE_MASTER_KEY: MASTER };
    return new Promise((resolve) => {
      execFile(process.execPath, [bin, ...args], { cwd, env, timeout: 60_000 }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  }

  it('OpenAI: follows the pages, sums the keys, and finds the token drift, the cost drift and the unpriced model', async () => {
    const res = await api('/admin/reconciliations', { provider: 'openai', from: D1, to: D3 });
    assert.equal(res.status, 200);
    const run = (await res.json()) as Record<string, any>;
    assert.equal(run.status, 'over');
    const lines = Object.fromEntries(run.lines.map((l: any) => [`${l.day} ${l.model}`, l]));
    assert.deepEqual(Object.keys(lines).sort(), [`${D1} gpt-4o-mini`, `${D1} o9-preview`, `${D2} gpt-4o-mini`, `${D3} gpt-4o-mini`]);
    const d1 = lines[`${D1} gpt-4o-mini`];
    assert.equal(d1.status, 'match');
    assert.deepEqual(d1.keys, ['key_a', 'key_b']);
    assert.deepEqual(d1.ledger, { input: 1000, cached: 200, output: 500, cost: 1, requests: 2, unpriced: 0 });
    assert.deepEqual(d1.report, { input: 1000, cached: 200, output: 500, cost: 1 });
    const d2 = lines[`${D2} gpt-4o-mini`];
    assert.equal(d2.status, 'drift');
    assert.equal(d2.drift.output, 100);
    assert.equal(d2.relative.output, 0.125);
    const d3 = lines[`${D3} gpt-4o-mini`];
    assert.equal(d3.drift.cost, 1);
    assert.equal(d3.relative.cost, 1 / 3);
    assert.deepEqual(
      run.zero_priced.map((l: any) => [l.day, l.model, l.report.cost]),
      [[D1, 'o9-preview', 0.75]],
    );
    assert.equal(run.totals.drift.cost, 1.75);
    assert.match(run.reasons.join('\n'), /o9-preview: priced at 0 in the ledger, billed \$0\.750000/);
    // The documented query: whole days, buckets of a day, grouped by model and key, the admin key as bearer.
    const usage = fake.requests.filter((r) => r.url.startsWith('/v1/organization/usage/completions'));
    assert.equal(usage.length, 2);
    const q = new URL(usage[0].url, 'http://fake').searchParams;
    assert.equal(q.get('start_time'), String(sec(D1)));
    assert.equal(q.get('end_time'), String(sec(D3) + 86_400));
    assert.equal(q.get('bucket_width'), '1d');
    assert.deepEqual(q.getAll('group_by'), ['model', 'api_key_id']);
    assert.equal(new URL(usage[1].url, 'http://fake').searchParams.get('page'), 'page_2');
    const costs = new URL(fake.requests.find((r) => r.url.startsWith('/v1/organization/costs'))!.url, 'http://fake').searchParams;
    assert.deepEqual(costs.getAll('group_by'), ['line_item']);
  });

  it('Anthropic: adds cache reads and writes to the input, skips non-token costs, names the missing day', async () => {
    const run = (await (await api('/admin/reconciliations', { provider: 'anthropic', from: D1, to: D2 })).json()) as Record<string, any>;
    assert.equal(run.status, 'over');
    assert.deepEqual(run.missing_days, [{ day: D2, missing_in: 'report' }]);
    const [d1, d2] = run.lines;
    assert.equal(d1.model, 'claude-sonnet-4');
    assert.equal(d1.status, 'match', JSON.stringify(d1));
    assert.deepEqual(d1.report, { input: 1000, cached: 200, output: 400, cost: 1.5 });
    assert.deepEqual(d1.keys, ['apikey_01']);
    assert.equal(d2.status, 'missing_in_report');
    const usage = fake.requests.find((r) => r.url.startsWith('/v1/organizations/usage_report/messages'))!;
    const q = new URL(usage.url, 'http://fake').searchParams;
    assert.equal(q.get('starting_at'), `${D1}T00:00:00.000Z`);
    assert.deepEqual(q.getAll('group_by[]'), ['model', 'api_key_id']);
  });

  it('OpenRouter: looks up each generation by the upstream id the ledger kept', async () => {
    const run = (await (await api('/admin/reconciliations', { provider: 'openrouter', from: D1, to: D1 })).json()) as Record<string, any>;
    assert.equal(run.status, 'ok', run.reasons.join('; '));
    assert.deepEqual(run.lines[0].report, { input: 300, cached: 20, output: 150, cost: 0.003 });
    const both = (await (await api('/admin/reconciliations', { provider: 'openrouter', from: D1, to: D2 })).json()) as Record<string, any>;
    assert.equal(both.status, 'over');
    assert.match(both.notes[0], /^1 of 3 generations unknown to OpenRouter \(first: gen-3\)/);
    assert.deepEqual(both.missing_days, [{ day: D2, missing_in: 'report' }]);
  });

  it('sluice reconcile prints both sides and the drift, and exits by the threshold', async () => {
    const over = await sluice(['reconcile', '--provider', 'openai', '--from', D1, '--to', D3]);
    assert.equal(over.code, 1, over.stderr);
    assert.match(over.stdout, /^reconcile openai 2026-11-01\.\.2026-11-03: over \(threshold 2\.00%, \$0\.01\)/);
    assert.match(
      over.stdout,
      /2026-11-02 +gpt-4o-mini \[key_a\] +1 +1000\/1000 +0\/0 +700\/800 +\$1\.000000 +\$1\.000000 +\$0\.000000 +0\.00% +drift/,
    );
    assert.match(over.stdout, /priced at 0 in the ledger, billed: 2026-11-01 o9-preview \$0\.750000/);
    const ok = await sluice(['reconcile', '--provider', 'openai', '--from', D1, '--to', D1, '--json']);
    // D1 alone still has the unpriced model billed.
    assert.equal(ok.code, 1);
    assert.equal(JSON.parse(ok.stdout).zero_priced.length, 1);
    const fine = await sluice(['reconcile', '--provider', 'openrouter', '--from', D1, '--to', D1]);
    assert.equal(fine.code, 0, fine.stderr);
    const bad = await sluice(['reconcile', '--provider', 'openai', '--from', 'yesterday']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--from must be a UTC day, YYYY-MM-DD/);
    const unknown = await sluice(['reconcile', '--provider', 'nope', '--from', D1, '--to', D1]);
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.stderr,
      /answered 400: No report is configured for provider nope \(reconcile\.providers: openai, anthropic, openrouter, broken\)/,
    );
  });

  it('a report that refuses the admin key is a 502, stored as failed, and the key is never said', async () => {
    const res = await api('/admin/reconciliations', { provider: 'broken', from: D1, to: D1 });
    assert.equal(res.status, 502);
    const body = (await res.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'provider_report_unavailable');
    assert.match(body.error.message, /OpenAI usage API answered 401: Invalid admin key/);
    const [stored] = ((await (await api('/admin/reconciliations?provider=broken')).json()) as { data: any[] }).data;
    assert.equal(stored.status, 'failed');
    for (const text of [JSON.stringify(body), JSON.stringify(stored), gw.logs.join('\n')]) {
      for (const secret of ['sk-admin-wrong-secret', OPENAI_ADMIN, ANTHROPIC_ADMIN, OPENROUTER_KEY]) assert.ok(!text.includes(secret));
    }
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ provider: 'openai', from: '2026-11-31', to: D1 }, 'from'],
      [{ provider: 'openai', from: D1 }, 'to'],
      [{ provider: 'openai', from: D3, to: D1 }, 'to'],
      [{ provider: 'openai', from: '2026-01-01', to: '2026-12-31' }, 'to'],
      [{ provider: 'nope', from: D1, to: D1 }, 'provider'],
      [{ provider: 'constructor', from: D1, to: D1 }, 'provider'],
      [{ provider: '__proto__', from: D1, to: D1 }, 'provider'],
      [{ provider: 'openai', from: D1, to: D1, extra: 1 }, 'extra'],
    ];
    for (const [body, param] of cases) {
      const res = await api('/admin/reconciliations', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(((await res.json()) as { error: { param: string } }).error.param, param, JSON.stringify(body));
    }
    const list = await api('/admin/reconciliations?limit=0');
    assert.equal(list.status, 400);
  });

  it('lists the stored results newest first, and exports the latest as gauges', async () => {
    const all = ((await (await api('/admin/reconciliations?limit=100')).json()) as { data: any[] }).data;
    assert.ok(all.length >= 6);
    const times = all.map((r) => r.created_at);
    assert.deepEqual(
      times,
      times.toSorted((x: string, y: string) => y.localeCompare(x)),
    );
    const openai = ((await (await api('/admin/reconciliations?provider=openai&limit=1')).json()) as { data: any[] }).data;
    assert.equal(openai.length, 1);
    assert.equal(openai[0].provider, 'openai');
    const metrics = await (await api('/metrics')).text();
    assert.match(metrics, /sluice_reconcile_over_threshold\{provider="openai"\} 1/);
    assert.match(metrics, /sluice_reconcile_zero_priced\{provider="openai"\} 1/);
    assert.match(metrics, /sluice_reconcile_failed\{provider="broken"\} 1/);
    assert.match(metrics, /sluice_reconcile_cost_drift_usd\{provider="openrouter"\} 0/);
  });

  it('runs one reconciliation of a provider at a time', async () => {
    generationDelayMs = 500;
    const first = api('/admin/reconciliations', { provider: 'openrouter', from: D1, to: D1 });
    await new Promise((r) => setTimeout(r, 100));
    const [a, b] = await Promise.all([first, api('/admin/reconciliations', { provider: 'openrouter', from: D1, to: D1 })]).finally(
      () => (generationDelayMs = 0),
    );
    const statuses = [a.status, b.status].toSorted((x, y) => x - y);
    assert.deepEqual(statuses, [200, 409]);
    const refused = a.status === 409 ? a : b;
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'reconciliation_running');
  });
});

describe('the reconciliation schedule', () => {
  it('reconciles each provider on its own, once an interval, and stores the run as scheduled', async () => {
    const fake = await startFakeUpstream();
    fake.reply(reports);
    const gw = await startGateway({
      auth: { master_key: MASTER },
      reconcile: {
        providers: { openrouter: { report: 'openrouter', admin_key: OPENROUTER_KEY, base_url: fake.url } },
        schedule: { interval_h: 0.0002, days: 2 },
      },
    });
    try {
      let data: any[] = [];
      for (let i = 0; i < 50 && data.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 200));
        const res = await fetch(`${gw.url}/admin/reconciliations`, { headers: { authorization: `Bearer ${MASTER}` } });
        data = ((await res.json()) as { data: any[] }).data;
      }
      assert.equal(data.length, 1);
      assert.equal(data[0].trigger, 'schedule');
      const today = new Date().toISOString().slice(0, 10);
      const day = (offset: number) => new Date(Date.parse(`${today}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);
      assert.deepEqual([data[0].from, data[0].to], [day(-2), day(-1)]);
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});

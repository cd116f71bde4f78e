import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import OpenAI, { APIError } from 'openai';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { parseSse, requestRecord, startGateway, type TestGateway, upstreamConfig } from '../helpers/gateway.ts';
import { chatJson, chatSse, post, speakAsTestCallers } from './limits-support.ts';

/** $0.001 a token in and out: a budget of $0.05 is 50 tokens. */
const PRICED = { pricing: { 'up/gpt-test': { input_mtok: 1000, output_mtok: 1000 } } };
const ask = (text: string, extra: Record<string, unknown> = {}) => ({ model: 'up/gpt-test', messages: [{ role: 'user', content: text }], ...extra });
/** An SSE body as one piece per frame (sent with a delay between them). */
const framesOf = (sse: string) => sse.split(/(?<=\n\n)/);
const countAdmissions = (gw: TestGateway) => {
  const counter = { n: 0 };
  const admit = gw.gateway.context.admit;
  gw.gateway.context.admit = (req) => {
    counter.n++;
    return admit(req);
  };
  return counter;
};

describe('budgets: a stream is stopped cleanly when its cost would pass the budget', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-budgets-'));
    upstream = await startFakeUpstream();
    gw = await startGateway({
      ...upstreamConfig(upstream.url),
      ...PRICED,
      store: { path: join(dir, 'sluice.db') },
      tiers: { free: { budgets: [{ period: 'day', limit_usd: 0.05 }] } },
    });
    speakAsTestCallers(gw);
  });
  after(async () => {
    await gw.close();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ends with finish_reason length, the usage and [DONE]; the upstream is cut; the row says budget_exhausted', async () => {
    // 60 pieces of 8 bytes = ~120 tokens of output: far past a 50-token budget.
    upstream.reply({ pieces: framesOf(chatSse(Array.from({ length: 60 }, () => 'tokens. '))), delayMs: 5 });
    const closedBefore = upstream.closedEarly;
    const res = await post(gw, ask('Hi', { stream: true, stream_options: { include_usage: true } }), { 'x-test-key': 'k1', 'x-test-tier': 'free' });
    assert.equal(res.status, 200);
    const frames = parseSse(res.text).frames;
    assert.equal(frames.at(-1)?.data, '[DONE]');
    const chunks = frames.slice(0, -1).map(
      (f) =>
        JSON.parse(f.data) as {
          choices: { delta: { content?: string }; finish_reason: string | null }[];
          usage?: { completion_tokens: number } | null;
        },
    );
    const finishes = chunks.filter((c) => c.choices[0]?.finish_reason);
    assert.deepEqual(
      finishes.map((c) => c.choices[0].finish_reason),
      ['length'],
    );
    const usage = chunks.at(-1)?.usage;
    assert.ok(usage && usage.completion_tokens > 0, 'the usage chunk comes after the finish');
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    // 7 prompt tokens (estimated) + what was streamed stays within the 50 the budget holds.
    assert.ok(text.length > 0 && text.length <= (50 - 7) * 4, `streamed ${text.length} bytes`);
    await upstream.waitForEarlyClose(5_000, closedBefore + 1);
    const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.equal(row.outcome, 'ok');
    assert.equal(row.finish_reason, 'budget_exhausted');
  });

  it('the next request of that key is refused before any output: 429 insufficient_quota, not retried by the SDK', async () => {
    const admissions = countAdmissions(gw);
    const res = await post(gw, ask('Hi', { stream: true }), { 'x-test-key': 'k1', 'x-test-tier': 'free' });
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('x-should-retry'), 'false');
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
    const error = JSON.parse(res.text).error as { type: string; code: string; message: string };
    assert.equal(error.code, 'insufficient_quota');
    assert.equal(error.type, 'insufficient_quota');
    assert.match(error.message, /^You exceeded your current quota: the daily budget of \$0\.05 of key k1 is used up/);
    // The openai SDK retries a 429 twice by default, but not this one.
    const client = new OpenAI({
      baseURL: `${gw.url}/v1`,
      apiKey: 'unused',
      maxRetries: 2,
      defaultHeaders: { 'x-test-key': 'k1', 'x-test-tier': 'free' },
    });
    const before = admissions.n;
    await assert.rejects(
      client.chat.completions.create(ask('Hi') as never),
      (err: unknown) => err instanceof APIError && err.status === 429 && err.code === 'insufficient_quota',
    );
    assert.equal(admissions.n - before, 1);
    // Another key of the tier has its own budget.
    upstream.reply({ body: chatJson('ok'), headers: { 'content-type': 'application/json' } });
    assert.equal((await post(gw, ask('Hi'), { 'x-test-key': 'k2', 'x-test-tier': 'free' })).status, 200);
  });

  it('the spend is in the store: a gateway restarted on it still refuses', async () => {
    await gw.close();
    const db = new DatabaseSync(join(dir, 'sluice.db'));
    const rows = db.prepare("select window_id, spent_usd from budget_spend where subject = 'key:k1'").all() as {
      window_id: string;
      spent_usd: number;
    }[];
    db.close();
    assert.equal(rows.length, 1);
    assert.match(rows[0].window_id, /^key:k1:day:\d{4}-\d{2}-\d{2}$/);
    assert.ok(rows[0].spent_usd >= 0.04, `spent ${rows[0].spent_usd}`);
    gw = await startGateway({
      ...upstreamConfig(upstream.url),
      ...PRICED,
      store: { path: join(dir, 'sluice.db') },
      tiers: { free: { budgets: [{ period: 'day', limit_usd: 0.05 }] } },
    });
    speakAsTestCallers(gw);
    assert.equal((await post(gw, ask('Hi'), { 'x-test-key': 'k1', 'x-test-tier': 'free' })).status, 429);
  });
});

describe('budgets: settlement, the key and project budgets of the caller, abandoned streams', () => {
  let upstream: FakeUpstream;
  let gw: TestGateway;
  before(async () => {
    upstream = await startFakeUpstream();
    gw = await startGateway({
      ...upstreamConfig(upstream.url),
      ...PRICED,
      limits: { reserve_output_tokens: 100 },
      tiers: {
        billed: { abandoned_streams: 'bill_generated' },
        voided: { abandoned_streams: 'void', budgets: [{ scope: 'project', period: 'month', limit_usd: 100 }] },
      },
    });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it("no request is refused for a reservation that has ended: sequential requests use the key's budget to the end", async () => {
    // The caller's own budget (from its key): $0.2. Each request reserves 7 + 100 tokens ($0.107)
    // and costs 10 + 5 ($0.015): reservations come and go, only the spend stays.
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 0.2 }]);
    upstream.reply({ body: chatJson('ok'), headers: { 'content-type': 'application/json' } });
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++) statuses.push((await post(gw, ask('Hi'), { 'x-test-key': 'seq' })).status);
    // 13 x $0.015 = $0.195 leaves $0.005, less than the least cost of $0.008 (the prompt and a token): the 14th is refused.
    assert.deepEqual(statuses, [...Array(13).fill(200), 429]);
  });

  it('a Responses stream stopped by its budget ends as response.incomplete', async () => {
    speakAsTestCallers(gw, [{ scope: 'key', period: 'day', limitUsd: 0.05 }]);
    upstream.reply({ pieces: framesOf(chatSse(Array.from({ length: 60 }, () => 'tokens. '))), delayMs: 5 });
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-test-key': 'resp' },
      body: JSON.stringify({ model: 'up/gpt-test', input: 'Hi', stream: true }),
    });
    const frames = parseSse(await res.text()).frames;
    assert.equal(frames.at(-1)?.data, '[DONE]');
    const terminal = JSON.parse(frames.at(-2)?.data ?? '{}') as { type: string; response: { status: string; incomplete_details: unknown } };
    assert.equal(terminal.type, 'response.incomplete');
    assert.deepEqual(terminal.response.incomplete_details, { reason: 'max_output_tokens' });
    const row = await requestRecord(gw, res.headers.get('x-request-id') ?? '');
    assert.equal(row.finish_reason, 'budget_exhausted');
  });

  it('a stream the client abandons is billed for what was generated, or voided when the tier says so', async () => {
    speakAsTestCallers(gw);
    for (const tier of ['billed', 'voided']) {
      upstream.reply({ pieces: framesOf(chatSse(Array.from({ length: 200 }, () => 'word '))), delayMs: 10 });
      const closed = upstream.closedEarly;
      const controller = new AbortController();
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-test-key': `ab-${tier}`, 'x-test-tier': tier },
        body: JSON.stringify(ask('Hi', { stream: true })),
        signal: controller.signal,
      });
      const id = res.headers.get('x-request-id') ?? '';
      const reader = res.body?.getReader();
      let seen = 0;
      while (seen < 600) seen += (await reader?.read())?.value?.length ?? 0;
      controller.abort();
      await upstream.waitForEarlyClose(5_000, closed + 1);
      const row = await requestRecord(gw, id);
      assert.equal(row.outcome, 'cancelled');
      assert.ok(row.usage.output_tokens > 0);
      if (tier === 'billed') {
        assert.ok(row.cost_usd > 0);
        assert.equal(row.billing, null);
      } else {
        assert.equal(row.cost_usd, 0);
        assert.equal(row.billing, 'void');
      }
    }
  });
});

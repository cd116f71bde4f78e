import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chatWith, projectWithKey } from '../helpers/admin-client.ts';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const KEY = 'sk-console-master';

/** The console's server side over HTTP: login, the session cookie, the live log and the rollups. */
describe('the console API', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startGateway({ auth: { master_key: KEY }, ledger: { flush_interval_ms: 10 } });
  });
  after(() => gw?.close());

  const login = (key: string) =>
    fetch(`${gw.url}/console/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key }),
    });
  const cookieOf = (res: Response) => (res.headers.get('set-cookie') ?? '').split(';')[0];

  it('opens a session for the master key: an opaque id in an HttpOnly, SameSite=Strict cookie, never the key', async () => {
    const res = await login(KEY);
    assert.equal(res.status, 200);
    const cookie = res.headers.get('set-cookie') ?? '';
    assert.match(cookie, /^sluice_console=[\w-]{40,}; Path=\/; HttpOnly; SameSite=Strict/);
    assert.ok(!cookie.includes(KEY));
    const session = await fetch(`${gw.url}/console/api/session`, { headers: { cookie: cookieOf(res) } });
    assert.equal(session.status, 200);
  });

  it('refuses a wrong key (401), a project key (403) and a request with no session (401)', async () => {
    assert.equal((await login('sk-wrong')).status, 401);
    const project = await projectWithKey(gw.url, KEY, 'console-proj');
    assert.equal((await login(project.key)).status, 403);
    assert.equal((await fetch(`${gw.url}/console/api/session`)).status, 401);
    assert.equal((await fetch(`${gw.url}/console/api/usage`)).status, 401);
    const usage = await fetch(`${gw.url}/console/api/usage`, { headers: { authorization: `Bearer ${project.key}` } });
    assert.equal(usage.status, 403);
    assert.equal((await fetch(`${gw.url}/v1/requests`, { headers: { cookie: 'sluice_console=made-up' } })).status, 401);
    assert.equal((await login(undefined as unknown as string)).status, 400);
  });

  it('lets the session call the API like its key, until logout ends it', async () => {
    const cookie = cookieOf(await login(KEY));
    assert.equal((await fetch(`${gw.url}/v1/requests`, { headers: { cookie } })).status, 200);
    const out = await fetch(`${gw.url}/console/api/logout`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: '{}' });
    assert.match(out.headers.get('set-cookie') ?? '', /Max-Age=0/);
    assert.equal((await fetch(`${gw.url}/v1/requests`, { headers: { cookie } })).status, 401);
  });

  it('pushes a stored request to the live log (SSE) and counts it in the per-minute and per-hour rollups', async () => {
    const cookie = cookieOf(await login(KEY));
    const events = await fetch(`${gw.url}/console/api/events?provider=mock`, { headers: { cookie } });
    assert.equal(events.status, 200);
    assert.match(events.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = events.body!.getReader();
    const chat = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({ model: 'mock/echo', messages: [{ role: 'user', content: 'console' }] }),
    });
    await chat.text();
    const requestId = chat.headers.get('x-request-id');
    let text = '';
    const decoder = new TextDecoder();
    while (!text.includes(`"request_id":"${requestId}"`)) {
      const { value, done } = await reader.read();
      assert.ok(!done, 'the live log ended before the request came');
      text += decoder.decode(value, { stream: true });
    }
    assert.match(text, /event: request\ndata: \{"object":"sluice.request"/);
    await reader.cancel();

    // The rollups are written in the transaction of the row the live log just showed: already there.
    const stats = (await (await fetch(`${gw.url}/console/api/stats?minutes=5`, { headers: { cookie } })).json()) as Record<string, any>;
    assert.equal(stats.source, 'rollups');
    assert.equal(stats.step_seconds, 60);
    assert.equal(stats.times.length, stats.by_model['mock/echo'].requests.length);
    assert.ok(stats.by_model['mock/echo'].requests.reduce((a: number, b: number) => a + b, 0) >= 1);
    const daily = (await (await fetch(`${gw.url}/console/api/stats?hours=24`, { headers: { cookie } })).json()) as Record<string, any>;
    assert.equal(daily.period, 'hour');
    assert.equal(daily.step_seconds, 3600);
    assert.equal(daily.times.length, 24);
    assert.ok(daily.by_model['mock/echo'].requests.reduce((a: number, b: number) => a + b, 0) >= 1);
    assert.equal(stats.open_streams, 0);

    const price = (await (await fetch(`${gw.url}/console/api/price/${requestId}`, { headers: { cookie } })).json()) as Record<string, any>;
    assert.equal(price.source, 'free');
    assert.equal(price.recorded_cost_usd, 0);
  });

  it("filters the request log by key and by project, and keeps a project key to its own project's rows", async () => {
    const own = await projectWithKey(gw.url, KEY, 'console-filter-a');
    await projectWithKey(gw.url, KEY, 'console-filter-b');
    const chat = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${own.key}` },
      body: JSON.stringify({ model: 'mock/echo', messages: [{ role: 'user', content: 'filtered' }] }),
    });
    await chat.text();
    const list = async (query: string, key = KEY) =>
      ((await (await fetch(`${gw.url}/v1/requests?${query}`, { headers: { authorization: `Bearer ${key}` } })).json()) as any).data as {
        request_id: string;
        key_id: string;
        project_id: string;
      }[];
    const byKey = await list(`key_id=${own.id}`);
    assert.deepEqual(
      byKey.map((r) => r.request_id),
      [chat.headers.get('x-request-id')],
    );
    assert.equal((await list('project_id=console-filter-a')).length, 1);
    assert.equal((await list('project_id=console-filter-b')).length, 0);
    // A project key asking for another project still reads its own.
    assert.deepEqual(
      (await list('project_id=console-filter-b', own.key)).map((r) => r.project_id),
      ['console-filter-a'],
    );
  });

  it('answers a bad stats window or live-log parameter with a 400 naming it', async () => {
    const auth = { authorization: `Bearer ${KEY}` };
    for (const [path, param] of [
      ['/console/api/stats?minutes=0', 'minutes'],
      ['/console/api/stats?hours=2161', 'hours'],
      ['/console/api/stats?hours=1.5', 'hours'],
      ['/console/api/stats?minutes=60&hours=24', 'hours'],
      ['/console/api/events?after=bogus', 'after'],
      ['/console/api/events?outcome=maybe', 'outcome'],
    ]) {
      const res = await fetch(`${gw.url}${path}`, { headers: auth });
      assert.equal(res.status, 400, path);
      assert.equal(((await res.json()) as any).error.param, param);
    }
  });

  it('serves the page without a key, with a content security policy, and never a file outside the bundle', async () => {
    const page = await fetch(`${gw.url}/console`);
    assert.ok(page.status === 200 || page.status === 503, `status ${page.status}`);
    if (page.status === 200) assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    assert.equal((await fetch(`${gw.url}/console/..%2F..%2Fpackage.json`)).status, 404);
    assert.equal((await fetch(`${gw.url}/console/assets/none.js`)).status, 404);
  });
});

describe('issue 25 defect 11: console session hygiene', () => {
  let gw: TestGateway;
  let proxied: TestGateway;
  let switched: TestGateway;

  before(async () => {
    gw = await startGateway({ auth: { master_key: KEY } });
    // The tests' client is 127.0.0.1: here it stands for a TLS-terminating proxy in front of sluice.
    proxied = await startGateway({ auth: { master_key: KEY }, server: { trusted_proxies: ['127.0.0.1'] } });
    switched = await startGateway({ auth: { master_key: KEY }, server: { secure_cookies: true } });
  });
  after(async () => {
    await gw?.close();
    await proxied?.close();
    await switched?.close();
  });

  const login = (url: string, headers: Record<string, string> = {}) =>
    fetch(`${url}/console/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ key: KEY }),
    });

  it('console session hygiene: every console API and /v1/requests answer is Cache-Control: no-store, errors included', async () => {
    const res = await login(gw.url);
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
    const chat = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({ model: 'mock/echo', messages: [{ role: 'user', content: 'cached?' }] }),
    });
    await chat.text();
    const id = chat.headers.get('x-request-id');
    const answers = [res];
    for (const path of [
      '/console/api/session',
      '/console/api/stats',
      '/console/api/usage',
      '/v1/requests',
      `/v1/requests/${id}`,
      `/console/api/price/${id}`,
    ]) {
      answers.push(await fetch(`${gw.url}${path}`, { headers: { cookie } }));
    }
    answers.push(await fetch(`${gw.url}/console/api/session`), await fetch(`${gw.url}/v1/requests`));
    const events = await fetch(`${gw.url}/console/api/events`, { headers: { cookie } });
    await events.body?.cancel();
    for (const answer of [...answers, events]) {
      assert.equal(answer.headers.get('cache-control'), 'no-store', `${answer.url} ${answer.status}`);
      if (answer !== events) await answer.text();
    }
    assert.deepEqual(
      answers.slice(-2).map((a) => a.status),
      [401, 401],
    );
  });

  it('the session cookie is Secure behind a trusted TLS-terminating proxy (X-Forwarded-Proto: https) or with server.secure_cookies', async () => {
    const secure = (res: Response) => /; Secure(;|$)/.test(res.headers.get('set-cookie') ?? '');
    assert.equal(secure(await login(proxied.url, { 'x-forwarded-proto': 'https' })), true);
    assert.equal(secure(await login(proxied.url, { 'x-forwarded-proto': 'http' })), false);
    assert.equal(secure(await login(proxied.url)), false);
    // Not from a trusted proxy: the header is the client's own, and says nothing.
    assert.equal(secure(await login(gw.url, { 'x-forwarded-proto': 'https' })), false);
    const res = await login(switched.url);
    assert.equal(secure(res), true);
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
    const out = await fetch(`${switched.url}/console/api/logout`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.match(out.headers.get('set-cookie') ?? '', /; Secure; Max-Age=0$/);
  });

  it('an unknown /console/api/* path is a JSON 404, not the page; the pages themselves are still served', async () => {
    for (const [method, path] of [
      ['GET', '/console/api/nope'],
      ['GET', '/console/api'],
      ['GET', '/console/api/session/extra'],
      ['POST', '/console/api/nope'],
    ]) {
      const res = await fetch(`${gw.url}${path}`, { method, headers: { authorization: `Bearer ${KEY}` } });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual((await res.json()) as unknown, {
        error: { message: `Unknown route: ${method} ${path}`, type: 'invalid_request_error', param: null, code: 'route_not_found' },
      });
    }
    const page = await fetch(`${gw.url}/console/keys`);
    assert.ok(page.status === 200 || page.status === 503, `status ${page.status}`);
    assert.match(page.headers.get('content-type') ?? '', /^text\//);
  });

  it('logout refuses a text/plain POST with 415, like every other POST, and the session stays', async () => {
    const cookie = ((await login(gw.url)).headers.get('set-cookie') ?? '').split(';')[0];
    for (const headers of [{ 'content-type': 'text/plain' }, {}]) {
      const res = await fetch(`${gw.url}/console/api/logout`, { method: 'POST', headers: { cookie, ...headers }, body: 'x' });
      assert.equal(res.status, 415);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'unsupported_media_type');
      assert.equal(res.headers.get('set-cookie'), null);
    }
    assert.equal((await fetch(`${gw.url}/console/api/session`, { headers: { cookie } })).status, 200);
  });
});

/** Two gateways on one store stand for two workers (or instances): a login on one holds on the other. */
describe('console sessions in the store', () => {
  let dir: string;
  let one: TestGateway;
  let two: TestGateway;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-console-'));
    const config = { auth: { master_key: KEY }, store: { path: join(dir, 'sluice.db') } };
    one = await startGateway(config);
    two = await startGateway(config);
  });
  after(async () => {
    await one?.close();
    await two?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("lets a session opened on one gateway call the other, ends it on both at logout, and ends an admin key's at its revocation", async () => {
    const login = async (url: string, key: string) => {
      const res = await fetch(`${url}/console/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key }),
      });
      assert.equal(res.status, 200);
      return (res.headers.get('set-cookie') ?? '').split(';')[0];
    };
    const status = async (url: string, cookie: string) => (await fetch(`${url}/console/api/session`, { headers: { cookie } })).status;
    const cookie = await login(one.url, KEY);
    assert.equal(await status(two.url, cookie), 200);
    await fetch(`${two.url}/console/api/logout`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(await status(one.url, cookie), 401);

    const admin = await projectWithKey(one.url, KEY, 'console-admins', { admin: true });
    const adminCookie = await login(one.url, admin.key);
    assert.equal(await status(two.url, adminCookie), 200);
    const revoked = await fetch(`${one.url}/admin/keys/${admin.id}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: '{}',
    });
    assert.equal(revoked.status, 200);
    assert.equal(await status(one.url, adminCookie), 401);
  });
});

const redisUrl = process.env.REDIS_URL;

/** The keys page's usage: what each key and project is held to, and how much of it is used now. */
for (const where of ['memory', 'Redis'] as const) {
  const skip = where === 'Redis' && !redisUrl ? 'REDIS_URL not set: the usage read from Redis is skipped' : false;
  describe(`the console's usage of limits and budgets (limits in ${where})`, { skip }, () => {
    let gw: TestGateway;

    before(async () => {
      gw = await startGateway({
        auth: { master_key: KEY },
        ledger: { flush_interval_ms: 10 },
        pricing: { 'mock/echo': { input_mtok: 3, output_mtok: 15 } },
        ...(where === 'Redis' && {
          limits: { redis_url: redisUrl, redis_prefix: `sluice-test:${process.pid}:${randomBytes(4).toString('hex')}:` },
        }),
        // Slow refills (a request is paid back in 10 s, a token in 0.6 s), so what the request
        // took is still out of the buckets when the page reads them on a busy machine.
        tiers: {
          metered: {
            requests_per_minute: 6,
            tokens_per_minute: 100,
            concurrent_requests: 2,
            project: { requests_per_minute: 6 },
            budgets: [{ period: 'day', limit_usd: 1 }],
          },
        },
      });
    });
    after(() => gw?.close());

    it("shows a key's tier limits with its request counted, its spend against its budgets, and its project's", async () => {
      const key = await projectWithKey(gw.url, KEY, 'usage-proj', { tier: 'metered', budgets: { monthly_usd: 5 } });
      const idle = await projectWithKey(gw.url, KEY, 'usage-proj', { tier: 'metered' });
      const chat = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key.key}` },
        body: JSON.stringify({ model: 'mock/echo', messages: [{ role: 'user', content: 'counted' }] }),
      });
      await chat.text();
      const record = await waitForRecord(gw.url, chat.headers.get('x-request-id') ?? '');
      assert.ok(record.cost_usd > 0);

      // The spend reaches the store with the ledger row: poll until the page sees it.
      let usage: Record<string, any> = {};
      for (let tries = 0; tries < 100; tries++) {
        if (tries) await new Promise((r) => setTimeout(r, 20));
        const res = await fetch(`${gw.url}/console/api/usage`, { headers: { authorization: `Bearer ${KEY}` } });
        assert.equal(res.status, 200);
        usage = (await res.json()) as Record<string, any>;
        if (usage.keys[key.id].budgets.some((b: { spent_usd: number }) => b.spent_usd > 0)) break;
      }
      const mine = usage.keys[key.id];
      assert.equal(mine.tier, 'metered');
      const limit = (scope: string, kind: string) => mine.limits.find((l: { scope: string; kind: string }) => l.scope === scope && l.kind === kind);
      assert.deepEqual([limit('key', 'requests').limit, limit('key', 'requests').used], [6, 1]);
      assert.ok(limit('key', 'tokens').used > 0);
      assert.deepEqual([limit('key', 'concurrent').limit, limit('key', 'concurrent').used], [2, 0]);
      assert.deepEqual([limit('project', 'requests').limit, limit('project', 'requests').used], [6, 1]);
      const budgets = mine.budgets.map((b: Record<string, unknown>) => [b.scope, b.period, b.limit_usd, b.spent_usd]);
      assert.deepEqual(budgets, [
        ['key', 'day', 1, record.cost_usd],
        ['key', 'month', 5, record.cost_usd],
      ]);
      // Another key of the same project and tier: its own buckets are full, the project's are shared.
      const other = usage.keys[idle.id];
      assert.equal(other.limits.find((l: { kind: string; scope: string }) => l.scope === 'key' && l.kind === 'requests').used, 0);
      assert.equal(other.limits.find((l: { kind: string; scope: string }) => l.scope === 'project' && l.kind === 'requests').used, 1);
      assert.equal(usage.projects['usage-proj'].tier, null);
    });

    it('counts a stream in progress against the concurrency limit', async () => {
      const key = await projectWithKey(gw.url, KEY, 'usage-busy', { tier: 'metered' });
      const abort = new AbortController();
      const stream = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        signal: abort.signal,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key.key}` },
        body: JSON.stringify({ model: 'mock/slow', stream: true, messages: [{ role: 'user', content: 'one two three four' }] }),
      });
      assert.equal(stream.status, 200);
      const usage = (await (await fetch(`${gw.url}/console/api/usage`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as any;
      abort.abort();
      await stream.body?.cancel().catch(() => {});
      const slots = usage.keys[key.id].limits.find((l: { scope: string; kind: string }) => l.scope === 'key' && l.kind === 'concurrent');
      assert.deepEqual([slots.limit, slots.used], [2, 1]);
    });
  });
}

/** A budget spent to its limit (the keys page's blocked status) and more models than a legend lists. */
describe("the console's blocked keys and bounded charts", () => {
  let gw: TestGateway;
  let upstream: FakeUpstream;

  before(async () => {
    upstream = await startFakeUpstream();
    // Usage worth $2 at the price below, whatever was asked: one request overspends a $1 budget.
    upstream.reply({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: 'costly',
        choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 },
      }),
    });
    gw = await startGateway({
      auth: { master_key: KEY },
      ledger: { flush_interval_ms: 10 },
      providers: { openai: { base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' } },
      pricing: { 'openai/costly': { input_mtok: 1000, output_mtok: 1000 } },
    });
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });

  it('marks a key and its budget blocked once its spend reaches the limit, as admission refuses it', async () => {
    const key = await projectWithKey(gw.url, KEY, 'usage-spent', { budgets: { daily_usd: 1 } });
    const first = await chatWith(gw.url, key.key, { model: 'openai/costly' });
    assert.equal(first.status, 200);
    await waitForRecord(gw.url, first.requestId);
    let mine: Record<string, any> = {};
    for (let tries = 0; tries < 100 && !mine.blocked; tries++) {
      if (tries) await new Promise((r) => setTimeout(r, 20));
      const res = await fetch(`${gw.url}/console/api/usage`, { headers: { authorization: `Bearer ${KEY}` } });
      mine = ((await res.json()) as Record<string, any>).keys[key.id];
    }
    assert.equal(mine.blocked, true);
    assert.deepEqual(
      mine.budgets.map((b: Record<string, unknown>) => [b.scope, b.period, b.spent_usd, b.exhausted]),
      [['key', 'day', 2, true]],
    );
    const refused = await chatWith(gw.url, key.key, { model: 'openai/costly' });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'insufficient_quota');
    // Its project has no budget of its own: not blocked.
    const res = await fetch(`${gw.url}/console/api/usage`, { headers: { authorization: `Bearer ${KEY}` } });
    assert.equal(((await res.json()) as Record<string, any>).projects['usage-spent'].blocked, false);
  });

  it('bounds the stats to the busiest eight series, the rest as other, and names the refused ones', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await chatWith(gw.url, KEY, { model: `openai/model-${i}` })).requestId);
    for (const id of ids) await waitForRecord(gw.url, id);
    let stats: Record<string, any> = {};
    const sum = (series: Record<string, { requests: number[] }>) =>
      Object.values(series).reduce((n, s) => n + s.requests.reduce((a, b) => a + b, 0), 0);
    // The costly request, its refusal (the previous test) and these ten; rollups are written with the rows.
    for (let tries = 0; tries < 100 && !(stats.by_model && sum(stats.by_model) >= 12); tries++) {
      if (tries) await new Promise((r) => setTimeout(r, 20));
      stats = (await (await fetch(`${gw.url}/console/api/stats?minutes=15`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as Record<
        string,
        any
      >;
    }
    const names = Object.keys(stats.by_model);
    assert.equal(names.length, 8, names.join(', '));
    assert.equal(names.at(-1), 'other');
    assert.equal(sum(stats.by_model), 12, 'nothing is lost in other');
    assert.deepEqual(Object.keys(stats.by_provider).sort(), ['openai', 'refused (no upstream)']);
    assert.ok(!names.includes('/'));
  });
});

async function waitForRecord(url: string, id: string): Promise<{ cost_usd: number }> {
  for (let tries = 0; ; tries++) {
    const res = await fetch(`${url}/v1/requests/${id}`, { headers: { authorization: `Bearer ${KEY}` } });
    if (res.status === 200) return (await res.json()) as { cost_usd: number };
    await res.text();
    assert.ok(tries < 100, 'the record was never stored');
    await new Promise((r) => setTimeout(r, 20));
  }
}

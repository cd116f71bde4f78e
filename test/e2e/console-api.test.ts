import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { projectWithKey } from '../helpers/admin-client.ts';
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
    assert.equal((await fetch(`${gw.url}/v1/requests`, { headers: { cookie: 'sluice_console=made-up' } })).status, 401);
    assert.equal((await login(undefined as unknown as string)).status, 400);
  });

  it('lets the session call the API like its key, until logout ends it', async () => {
    const cookie = cookieOf(await login(KEY));
    assert.equal((await fetch(`${gw.url}/v1/requests`, { headers: { cookie } })).status, 200);
    const out = await fetch(`${gw.url}/console/api/logout`, { method: 'POST', headers: { cookie } });
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
    await fetch(`${two.url}/console/api/logout`, { method: 'POST', headers: { cookie } });
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

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { adminCall, projectWithKey } from '../helpers/admin-client.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const MASTER = 'sk-master-spend-test';
const bin = fileURLToPath(new URL('../../bin/sluice.js', import.meta.url));

function sluice(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('tags and spend reports through the API', () => {
  let gw: TestGateway;
  let keyA: Record<string, any>;
  let keyB: Record<string, any>;
  const ids: Record<string, string> = {};

  async function post(key: string, path: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, id: res.headers.get('x-request-id') ?? '', body: (await res.json()) as Record<string, any> };
  }
  const get = (key: string, path: string) => adminCall(gw.url, key, 'GET', path);
  const hi = [{ role: 'user', content: 'hi' }];

  before(async () => {
    gw = await startGateway({ auth: { master_key: MASTER }, ledger: { flush_interval_ms: 10 } });
    keyA = await projectWithKey(gw.url, MASTER, 'team-a', { name: 'alpha key', budgets: { daily_usd: 5 } });
    keyB = await projectWithKey(gw.url, MASTER, 'team-b');
    const chat = await post(keyA.key, '/v1/chat/completions', { model: 'mock/echo', messages: hi, metadata: { tags: ['search', 'exp:1'] } });
    const header = await post(keyA.key, '/v1/chat/completions', { model: 'mock/echo', messages: hi }, { 'x-sluice-tags': 'search, batch' });
    const responses = await post(keyA.key, '/v1/responses', { model: 'mock/echo', input: 'hi', metadata: { tags: ['batch'], note: 'kept' } });
    const messages = await post(keyB.key, '/v1/messages', { model: 'mock/echo', max_tokens: 20, messages: hi, metadata: { tags: ['search'] } });
    const untagged = await post(keyB.key, '/v1/chat/completions', { model: 'mock/echo', messages: hi });
    for (const [name, r] of Object.entries({ chat, header, responses, messages, untagged })) {
      assert.equal(r.status, 200, `${name}: ${JSON.stringify(r.body)}`);
      ids[name] = r.id;
    }
  });
  after(() => gw?.close());

  it('records the tags of the body and the header in the request log', async () => {
    const tagsOf = async (id: string) => (await get(MASTER, `/v1/requests/${id}`)).body.tags;
    assert.deepEqual(await tagsOf(ids.chat), ['search', 'exp:1']);
    assert.deepEqual(await tagsOf(ids.header), ['search', 'batch']);
    assert.deepEqual(await tagsOf(ids.responses), ['batch']);
    assert.deepEqual(await tagsOf(ids.messages), ['search']);
    assert.deepEqual(await tagsOf(ids.untagged), []);
  });

  it('refuses bad tags with a 400 naming the field, on every surface', async () => {
    const bad = await post(keyA.key, '/v1/chat/completions', { model: 'mock/echo', messages: hi, metadata: { tags: 'search' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, 'metadata.tags');
    const long = await post(keyA.key, '/v1/embeddings', { model: 'mock/echo', input: 'x', metadata: { tags: ['x'.repeat(65)] } });
    assert.equal(long.status, 400);
    assert.equal(long.body.error.param, 'metadata.tags[0]');
    const header = await post(keyA.key, '/v1/responses', { model: 'mock/echo', input: 'hi' }, { 'x-sluice-tags': 'a b' });
    assert.equal(header.status, 400);
    assert.equal(header.body.error.param, 'x-sluice-tags');
    const messages = await post(keyA.key, '/v1/messages', { model: 'mock/echo', max_tokens: 5, messages: hi, metadata: { tags: [1] } });
    assert.equal(messages.status, 400);
    assert.equal(messages.body.type, 'error');
  });

  it('groups by tag: each tag counts its requests, the totals count each request once', async () => {
    const { status, body } = await get(MASTER, '/v1/spend?group_by=tag&period=hour');
    assert.equal(status, 200);
    const byTag = Object.fromEntries(body.groups.map((g: any) => [g.tag ?? '', g.totals.requests]));
    // The refused requests count too (their own rows), untagged or not.
    assert.equal(byTag.search, 3);
    assert.equal(byTag.batch, 2);
    assert.equal(byTag['exp:1'], 1);
    const log = await get(MASTER, '/v1/requests?limit=1000');
    assert.equal(body.totals.requests, log.body.data.length);
    const cost = log.body.data.reduce((a: number, r: any) => a + r.cost_usd, 0);
    assert.equal(Math.round(body.totals.cost_usd * 100), Math.round(cost * 100));
  });

  it("scopes a project key to its project's spend; the master key sees every project, with names", async () => {
    const a = await get(keyA.key, '/v1/spend?group_by=project,key&project_id=team-b');
    assert.equal(a.status, 200);
    assert.deepEqual(
      a.body.groups.map((g: any) => g.project_id),
      a.body.groups.map(() => 'team-a'),
    );
    assert.ok(a.body.groups.some((g: any) => g.key_name === 'alpha key'));
    const all = await get(MASTER, '/v1/spend?group_by=project');
    assert.deepEqual(all.body.groups.map((g: any) => g.project_id).sort(), ['team-a', 'team-b']);
    assert.equal(all.body.groups.find((g: any) => g.project_id === 'team-a').project_name, 'team-a');
  });

  it('exports CSV by format=csv or Accept: text/csv', async () => {
    const res = await fetch(`${gw.url}/v1/spend?group_by=model,tag&period=day`, {
      headers: { authorization: `Bearer ${MASTER}`, accept: 'text/csv' },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    const lines = (await res.text()).trimEnd().split('\r\n');
    assert.equal(lines[0], 'period_start,model,tag,requests,errors,input_tokens,cached_input_tokens,cached_share,output_tokens,cost_usd');
    assert.ok(
      lines.some((l) => /^\d{4}-\d\d-\d\dT00:00:00\.000Z,mock\/echo,search,3,/.test(l)),
      lines.join('\n'),
    );
  });

  it('refuses an unknown group_by or period with a 400 naming it', async () => {
    for (const [query, param] of [
      ['group_by=team', 'group_by'],
      ['period=week', 'period'],
      ['since=1', 'since'],
    ]) {
      const res = await get(MASTER, `/v1/spend?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.error.param, param, query);
    }
  });

  it("shows each budget's burn-down: its window's spend against its limit", async () => {
    const { body } = await get(keyA.key, '/v1/spend/budgets');
    const day = body.data.find((b: any) => b.scope === 'key' && b.id === keyA.id && b.period === 'day');
    assert.equal(day.limit_usd, 5);
    assert.equal(day.name, 'alpha key');
    assert.ok(day.spent_usd >= 0 && day.remaining_usd <= 5 && day.elapsed > 0 && day.elapsed <= 1);
    assert.ok(body.data.every((b: any) => b.project_id === 'team-a'));
  });

  it('prints the report on the command line (sluice spend), and its CSV', async () => {
    const text = await sluice(['spend', '--url', gw.url, '--group-by', 'tag', '--period', 'hour'], { SLUICE_MASTER_KEY: MASTER });
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^spend by hour from /);
    assert.match(text.stdout, /\ntag search {2}3 req {2}/);
    assert.match(text.stdout, /\ntotal {2}\d+ req {2}/);
    const csv = await sluice(['spend', '--url', gw.url, '--csv', '--group-by', 'project'], { SLUICE_MASTER_KEY: keyB.key });
    assert.equal(csv.code, 0, csv.stderr);
    const rows = csv.stdout.trimEnd().split('\r\n');
    assert.equal(
      rows[0],
      'period_start,project_id,project_name,requests,errors,input_tokens,cached_input_tokens,cached_share,output_tokens,cost_usd',
    );
    assert.ok(rows.slice(1).every((r) => r.split(',')[1] === 'team-b'));
    const bad = await sluice(['spend', '--url', gw.url, '--period', 'week'], { SLUICE_MASTER_KEY: MASTER });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /answered 400: period must be hour, day, month\./);
  });
});

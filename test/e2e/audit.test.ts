import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { configSchema } from '../../src/config/schema.ts';
import { createSecretHasher, parseKey } from '../../src/governance/keys/key-format.ts';
import { createGateway, type Gateway } from '../../src/server/app.ts';
import { adminCall } from '../helpers/admin-client.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { createTestSchema, noPostgres, type TestSchema } from '../helpers/postgres.ts';

const MASTER = 'sk-master-audit-test';
const PEPPER = 'audit-test-pepper';
const DAY_MS = 24 * 60 * 60 * 1000;

const config = (retentionDays: number, store: Record<string, unknown>) =>
  configSchema.parse({
    server: { port: 0, host: '127.0.0.1' },
    store,
    auth: { master_key: MASTER, key_pepper: PEPPER },
    audit: { retention_days: retentionDays },
    model_list: [{ model_name: 'fast', model: 'mock/echo' }],
  });

interface Entry {
  id: string;
  created_at: string;
  actor: { kind: string; id: string | null; name: string | null };
  action: string;
  target: { type: string; id: string | null };
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  request_id: string;
  client_address: string | null;
  error_code: string | null;
}

/** The same suite on the embedded store and, with DATABASE_URL, on PostgreSQL (a schema of its own). */
function auditSuite(engine: string, openStore: () => Promise<Record<string, unknown>>, skip: string | false = false) {
  describe(`the audit log (GET /admin/audit): ${engine}`, { skip }, () => {
    let gateway: Gateway;
    let url: string;
    /** Every secret the test handled: none may appear in the audit log. */
    const secrets: string[] = [MASTER, PEPPER];
    const hash = createSecretHasher(PEPPER);
    const call = (key: string | undefined, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) =>
      adminCall(url, key, method, path, body);
    const audit = async (query = '', key = MASTER) => {
      const res = await call(key, 'GET', `/admin/audit${query}`);
      assert.equal(res.status, 200, res.text);
      return res.body as { data: Entry[]; has_more: boolean; next_cursor: string | null };
    };
    /** The newest entry, checked to be the one the call just made. */
    const latest = async (requestId: string) => {
      const [entry] = (await audit('?limit=1')).data;
      assert.equal(entry.request_id, requestId);
      return entry;
    };
    const remember = (key: string) => {
      const secret = parseKey(key)!.secret;
      secrets.push(key, secret, hash(secret).toString('hex'));
    };
    const login = (key: string) =>
      fetch(`${url}/console/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key }) });

    before(async () => {
      const store = await openStore();
      // A reload reads the same config with a longer retention.
      gateway = createGateway(config(30, store), {}, undefined, { write: () => {} }, { reload: { load: () => config(90, store) } });
      url = `http://127.0.0.1:${(await gateway.listen()).port}`;
    });
    after(() => gateway?.shutdown(0));

    const succeeded = <T extends { status: number; text: string }>(res: T, what: string): T => {
      assert.ok(res.status < 300, `${what}: ${res.status} ${res.text}`);
      return res;
    };
    let adminKey: Record<string, any>;
    let appKey: Record<string, any>;

    it('records each mutation once, by its actor, with the fields before and after', async () => {
      const project = succeeded(await call(MASTER, 'POST', '/admin/projects', { id: 'team-a', name: 'Team A' }), 'project');
      const projectEntry = (await audit('?limit=1')).data[0];
      assert.equal(projectEntry.action, 'project.create');
      assert.deepEqual(projectEntry.actor, { kind: 'master', id: 'master', name: null });
      assert.deepEqual(projectEntry.target, { type: 'project', id: 'team-a' });
      assert.equal(projectEntry.before, null);
      assert.equal(projectEntry.after?.name, 'Team A');
      assert.equal(projectEntry.client_address, '127.0.0.1');
      assert.equal(project.body.id, 'team-a');

      adminKey = (await call(MASTER, 'POST', '/admin/keys', { project: 'team-a', name: 'ops', admin: true })).body;
      remember(adminKey.key);
      const keyEntry = (await audit('?limit=1')).data[0];
      assert.equal(keyEntry.action, 'key.create');
      assert.deepEqual(keyEntry.target, { type: 'key', id: adminKey.id });
      assert.equal(keyEntry.after?.admin, true);
      assert.equal(keyEntry.after?.prefix, `sk-sluice-${adminKey.id}`);

      // An admin key acts under its id and name.
      const created = await fetch(`${url}/admin/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ project: 'team-a', name: 'app' }),
      });
      appKey = (await created.json()) as Record<string, any>;
      remember(appKey.key);
      const byKey = await latest(created.headers.get('x-request-id')!);
      assert.deepEqual(byKey.actor, { kind: 'key', id: adminKey.id, name: 'ops' });

      const rotated = await fetch(`${url}/admin/keys/${appKey.id}/rotate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
        body: JSON.stringify({ grace_s: 60 }),
      });
      const rotatedKey = (await rotated.json()) as Record<string, any>;
      remember(rotatedKey.key);
      const rotation = await latest(rotated.headers.get('x-request-id')!);
      assert.equal(rotation.action, 'key.rotate');
      assert.deepEqual(rotation.before, { previous_secret_valid_until: null });
      assert.equal(typeof rotation.after?.previous_secret_valid_until, 'string');

      const revoked = await fetch(`${url}/admin/keys/${appKey.id}/revoke`, {
        method: 'POST',
        headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
        body: '{}',
      });
      const revocation = await latest(revoked.headers.get('x-request-id')!);
      assert.equal(revocation.action, 'key.revoke');
      assert.equal(revocation.before?.status, 'active');
      assert.equal(revocation.before?.revoked_at, null);
      assert.equal(revocation.after?.status, 'revoked');
      assert.equal(typeof revocation.after?.revoked_at, 'string');
      assert.deepEqual(Object.keys(revocation.after!).sort(), ['revoked_at', 'status']);

      succeeded(await call(MASTER, 'POST', '/admin/endpoints', { project: 'team-a', name: 'chat', model: 'fast' }), 'endpoint');
      const endpoint = (await audit('?limit=1')).data[0];
      assert.equal(endpoint.action, 'endpoint.create');
      assert.deepEqual(endpoint.target, { type: 'endpoint', id: 'team-a/chat' });

      // The edits: one entry each, only the fields that changed.
      const newest = async () => (await audit('?limit=1')).data[0];
      succeeded(await call(MASTER, 'PATCH', '/admin/projects/team-a', { name: 'Team A2', tier: null }), 'project patch');
      const projectUpdate = await newest();
      assert.equal(projectUpdate.action, 'project.update');
      assert.deepEqual([projectUpdate.before, projectUpdate.after], [{ name: 'Team A' }, { name: 'Team A2' }]);
      const spare = succeeded(await call(MASTER, 'POST', '/admin/keys', { project: 'team-a', name: 'spare' }), 'spare key').body;
      remember(spare.key);
      succeeded(await call(MASTER, 'PATCH', `/admin/keys/${spare.id}`, { disabled: true }), 'key patch');
      const keyUpdate = await newest();
      assert.equal(keyUpdate.action, 'key.update');
      assert.equal(keyUpdate.before?.status, 'active');
      assert.equal(keyUpdate.after?.status, 'disabled');
      succeeded(await call(MASTER, 'DELETE', `/admin/keys/${spare.id}`), 'key delete');
      const keyDelete = await newest();
      assert.deepEqual([keyDelete.action, keyDelete.target], ['key.delete', { type: 'key', id: spare.id }]);
      assert.equal(keyDelete.after?.status, 'deleted');
      succeeded(await call(MASTER, 'PATCH', '/admin/endpoints/team-a/chat', { model: 'mock/echo' }), 'endpoint patch');
      const endpointUpdate = await newest();
      assert.deepEqual([endpointUpdate.before?.model, endpointUpdate.after?.model], ['fast', 'mock/echo']);
      succeeded(await call(MASTER, 'DELETE', '/admin/endpoints/team-a/chat'), 'endpoint delete');
      const endpointDelete = await newest();
      assert.equal(endpointDelete.action, 'endpoint.delete');
      assert.equal(endpointDelete.before?.name, 'chat');
      assert.equal(endpointDelete.after, null);
      succeeded(await call(MASTER, 'POST', '/admin/projects', { id: 'gone', name: 'Gone' }), 'project');
      succeeded(await call(MASTER, 'DELETE', '/admin/projects/gone'), 'project delete');
      const projectDelete = await newest();
      assert.equal(projectDelete.action, 'project.delete');
      assert.deepEqual(projectDelete.before, { deleted_at: null, deleted_keys: null });
      assert.equal(typeof projectDelete.after?.deleted_at, 'string');

      const reload = await call(MASTER, 'POST', '/admin/reload', {});
      assert.equal(reload.status, 200, reload.text);
      const reloaded = (await audit('?limit=1')).data[0];
      assert.equal(reloaded.action, 'config.reload');
      assert.deepEqual(reloaded.after, { changed: ['audit.retention_days'], restart_required: [] });

      // A refused change records nothing.
      const before = (await audit()).data.length;
      assert.equal((await call(MASTER, 'POST', '/admin/projects', { id: 'team-a', name: 'Again' })).status, 409);
      assert.equal((await call(MASTER, 'POST', '/admin/keys/0000000000000000/revoke', {})).status, 404);
      assert.equal((await audit()).data.length, before);
    });

    it('records console sign-ins, sign-outs and failed sign-ins, never the key presented', async () => {
      const wrong = `sk-sluice-${adminKey.id}_${'x'.repeat(43)}`;
      secrets.push(wrong, 'not-a-key-at-all');
      assert.equal((await login(wrong)).status, 401);
      const failed = (await audit('?action=console.sign_in_failed')).data[0];
      assert.deepEqual(failed.actor, { kind: 'anonymous', id: null, name: null });
      assert.deepEqual(failed.target, { type: 'console', id: adminKey.id });
      assert.equal(failed.error_code, 'invalid_api_key');
      assert.equal((await login('not-a-key-at-all')).status, 401);
      assert.equal((await login(appKey.key)).status, 401);

      const res = await login(adminKey.key);
      assert.equal(res.status, 200);
      const signIn = (await audit('?action=console.sign_in')).data[0];
      assert.deepEqual(signIn.actor, { kind: 'key', id: adminKey.id, name: 'ops' });
      const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
      // The console reads the audit log with its session.
      const page = await fetch(`${url}/admin/audit?limit=1`, { headers: { cookie } });
      assert.equal(page.status, 200);
      const out = await fetch(`${url}/console/api/logout`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: '{}' });
      assert.equal(out.status, 200);
      const signOut = await latest(out.headers.get('x-request-id')!);
      assert.equal(signOut.action, 'console.sign_out');
      assert.deepEqual(signOut.actor, { kind: 'key', id: adminKey.id, name: 'ops' });
      // Signing out without a session records nothing.
      await fetch(`${url}/console/api/logout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal((await audit('?limit=1')).data[0].id, signOut.id);
    });

    it('filters by actor, action, target and time', async () => {
      const all = (await audit('?limit=1000')).data;
      const only = async (query: string, expect: (e: Entry) => boolean) => {
        const got = (await audit(query)).data;
        assert.deepEqual(
          got.map((e) => e.id),
          all.filter(expect).map((e) => e.id),
          query,
        );
        assert.ok(got.length > 0, query);
      };
      await only(`?actor=${adminKey.id}`, (e) => e.actor.id === adminKey.id);
      await only('?actor=master', (e) => e.actor.id === 'master');
      await only('?action=key.create', (e) => e.action === 'key.create');
      await only('?target_type=key', (e) => e.target.type === 'key');
      await only(`?target_type=key&target_id=${appKey.id}`, (e) => e.target.type === 'key' && e.target.id === appKey.id);
      const middle = all[Math.floor(all.length / 2)].created_at;
      await only(`?from=${middle}`, (e) => e.created_at >= middle);
      await only(`?to=${encodeURIComponent(middle)}`, (e) => e.created_at < middle);
      for (const [query, param] of [
        ['?from=yesterday', 'from'],
        ['?limit=0', 'limit'],
        ['?cursor=bm9wZQ', 'cursor'],
        ['?actor=a%00b', 'actor'],
        ['?colour=red', 'colour'],
      ]) {
        const res = await call(MASTER, 'GET', `/admin/audit${query}`);
        assert.equal(res.status, 400, query);
        assert.equal(res.body.error.param, param, query);
      }
      assert.equal((await call(appKey.key, 'GET', '/admin/audit')).status, 401);
    });

    it('pages newest first by cursor, every entry once', async () => {
      const all = (await audit('?limit=1000')).data.map((e) => e.id);
      const seen: string[] = [];
      let query = '?limit=3';
      for (let pages = 0; pages < 50; pages++) {
        const page = await audit(query);
        seen.push(...page.data.map((e) => e.id));
        if (!page.has_more) break;
        query = `?limit=3&cursor=${page.next_cursor}`;
      }
      assert.deepEqual(seen, all);
    });

    it('holds no secret: no key, no hash, no master key, no pepper', async () => {
      const text = (await call(MASTER, 'GET', '/admin/audit?limit=1000')).text;
      for (const secret of secrets) assert.ok(!text.includes(secret), `the audit log holds ${secret.slice(0, 14)}...`);
    });

    it('deletes entries past audit.retention_days, and keeps the others', async () => {
      const count = (await audit('?limit=1000')).data.length;
      // The reload set 90 days: the entries are kept 89 days from now, gone at 91.
      assert.equal(await gateway.context.audit.prune(Date.now() + 89 * DAY_MS), 0);
      assert.equal((await audit('?limit=1000')).data.length, count);
      assert.equal(await gateway.context.audit.prune(Date.now() + 91 * DAY_MS), count);
      assert.deepEqual((await audit()).data, []);
    });
  });
}

auditSuite('node:sqlite', async () => ({ path: ':memory:' }));

const schemas: TestSchema[] = [];
after(async () => {
  for (const s of schemas) await s.drop();
});
auditSuite(
  'PostgreSQL',
  async () => {
    const schema = await createTestSchema();
    schemas.push(schema);
    return { path: ':memory:', database_url: schema.url };
  },
  noPostgres,
);

describe('the audit log of a gateway without a store (ledger.enabled: false)', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ auth: { master_key: MASTER }, ledger: { enabled: false } });
  });
  after(() => gw?.close());

  it("writes sign-ins to sluice's log, and GET /admin/audit says there is no store", async () => {
    const res = await fetch(`${gw.url}/console/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: MASTER }),
    });
    assert.equal(res.status, 200);
    const line = gw.logs.find((l) => l.includes('"msg":"audit entry"') && l.includes('"action":"console.sign_in"'));
    assert.ok(line, gw.logs.join('\n'));
    assert.ok(!line.includes(MASTER));
    const read = await adminCall(gw.url, MASTER, 'GET', '/admin/audit');
    assert.equal(read.status, 400);
    assert.match(read.body.error.message, /ledger\.enabled: false/);
  });
});

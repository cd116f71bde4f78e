import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSecretHasher, parseKey } from '../../src/governance/keys/key-format.ts';
import { adminCall, projectWithKey } from '../helpers/admin-client.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const MASTER = 'sk-master-admin-test';
const PEPPER = 'admin-test-pepper';

describe('the admin API', () => {
  let gw: TestGateway;
  const call = (key: string | undefined, method: 'GET' | 'POST', path: string, body?: unknown) => adminCall(gw.url, key, method, path, body);

  before(async () => {
    gw = await startGateway({
      auth: { master_key: MASTER, key_pepper: PEPPER },
      tiers: { gold: {} },
      model_list: [{ model_name: 'fast', model: 'mock/echo' }],
    });
  });
  after(() => gw?.close());

  it('creates projects: generated or chosen ids, a clash is a 409, sluice paths and bad fields are 400s naming them', async () => {
    const generated = await call(MASTER, 'POST', '/admin/projects', { name: 'Team A', tier: 'gold', budgets: { monthly_usd: 50 } });
    assert.equal(generated.status, 201);
    assert.match(generated.body.id, /^proj_[0-9a-f]{12}$/);
    assert.deepEqual(
      { ...generated.body, id: 'x', created_at: 'x' },
      {
        object: 'sluice.project',
        id: 'x',
        name: 'Team A',
        tier: 'gold',
        budgets: { daily_usd: null, monthly_usd: 50 },
        models: null,
        metadata: null,
        created_at: 'x',
        deleted_at: null,
      },
    );
    assert.equal((await call(MASTER, 'POST', '/admin/projects', { id: 'acme', name: 'Acme' })).status, 201);
    const clash = await call(MASTER, 'POST', '/admin/projects', { id: 'acme', name: 'Again' });
    assert.equal(clash.status, 409);
    assert.equal(clash.body.error.code, 'project_exists');
    for (const [body, param] of [
      [{ id: 'v1', name: 'x' }, 'id'],
      [{ id: 'a/b', name: 'x' }, 'id'],
      [{ id: '..', name: 'x' }, 'id'],
      [{ name: '' }, 'name'],
      [{ name: 'x', tier: 'platinum' }, 'tier'],
      [{ name: 'x', budgets: { daily_usd: -1 } }, 'budgets.daily_usd'],
      [{ name: 'x', colour: 'red' }, 'colour'],
    ] as const) {
      const res = await call(MASTER, 'POST', '/admin/projects', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.param, param, JSON.stringify(body));
    }
    const listed = await call(MASTER, 'GET', '/admin/projects');
    assert.equal(listed.body.object, 'list');
    assert.ok(listed.body.data.some((p: { id: string }) => p.id === 'acme'));
  });

  it('shows a key once; listings carry its id and prefix, never the key or its hash', async () => {
    const created = await projectWithKey(gw.url, MASTER, 'listing', {
      name: 'ci',
      tier: 'gold',
      models: ['fast'],
      expires_in_s: 3600,
      budgets: { daily_usd: 2 },
    });
    const secret = parseKey(created.key)?.secret;
    assert.ok(secret, created.key);
    assert.equal(created.prefix, `sk-sluice-${created.id}`);
    assert.equal(created.project, 'listing');
    assert.deepEqual(created.models, ['fast']);
    assert.equal(created.status, 'active');
    assert.ok(Date.parse(created.expires_at) > Date.now());
    const hash = createSecretHasher(PEPPER)(secret).toString('hex');
    for (const path of ['/admin/keys', '/admin/keys?project=listing']) {
      const listed = await call(MASTER, 'GET', path);
      assert.equal(listed.status, 200);
      const entry = listed.body.data.find((k: { id: string }) => k.id === created.id);
      assert.ok(entry, path);
      assert.equal(entry.key, undefined);
      assert.ok(!listed.text.includes(secret), 'the secret is listed');
      assert.ok(!listed.text.includes(hash), 'the hash is listed');
    }
    assert.deepEqual((await call(MASTER, 'GET', '/admin/keys?project=nobody')).body.data, []);
  });

  it('refuses keys for a missing project, an unknown tier, a bad expiry', async () => {
    await call(MASTER, 'POST', '/admin/projects', { id: 'checks', name: 'checks' });
    const missing = await call(MASTER, 'POST', '/admin/keys', { project: 'nope' });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.param, 'project');
    for (const [body, param] of [
      [{ project: 'checks', tier: 'platinum' }, 'tier'],
      [{ project: 'checks', expires_at: 'tomorrow' }, 'expires_at'],
      [{ project: 'checks', expires_at: '2099-01-01T00:00:00Z', expires_in_s: 5 }, 'expires_in_s'],
      [{ project: 'checks', models: [''] }, 'models[0]'],
      [{ project: 'checks', admin: 'yes' }, 'admin'],
    ] as const) {
      const res = await call(MASTER, 'POST', '/admin/keys', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.param, param, JSON.stringify(body));
    }
  });

  it('only the master key or an admin key may call it: no key 401, a project key 403', async () => {
    const plain = await projectWithKey(gw.url, MASTER, 'perm');
    const admin = await projectWithKey(gw.url, MASTER, 'perm', { admin: true });
    assert.equal((await call(undefined, 'GET', '/admin/keys')).status, 401);
    const refused = await call(plain.key, 'GET', '/admin/keys');
    assert.equal(refused.status, 403);
    assert.deepEqual(Object.keys(refused.body.error).sort(), ['code', 'message', 'param', 'type']);
    assert.equal(refused.body.error.code, 'admin_key_required');
    assert.equal((await call(plain.key, 'POST', '/admin/keys', { project: 'perm', admin: true })).status, 403);
    assert.equal((await call(admin.key, 'GET', '/admin/keys')).status, 200);
    assert.equal((await call(admin.key, 'POST', '/admin/projects', { name: 'made by an admin key' })).status, 201);
  });

  it('a POST without a JSON body is refused before anything changes (no cross-site form can revoke)', async () => {
    const created = await projectWithKey(gw.url, MASTER, 'csrf');
    const res = await fetch(`${gw.url}/admin/keys/${created.id}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'text/plain' },
      body: '{}',
    });
    assert.equal(res.status, 415);
    const listed = await call(MASTER, 'GET', '/admin/keys?project=csrf');
    assert.equal(listed.body.data[0].status, 'active');
  });

  it('revoke and rotate name a missing key in a 404; rotating a revoked key is a 409', async () => {
    assert.equal((await call(MASTER, 'POST', '/admin/keys/ffffffffffffffff/revoke')).status, 404);
    const rotateMissing = await call(MASTER, 'POST', '/admin/keys/ffffffffffffffff/rotate');
    assert.equal(rotateMissing.status, 404);
    assert.equal(rotateMissing.body.error.param, 'key_id');
    const created = await projectWithKey(gw.url, MASTER, 'gone');
    assert.equal((await call(MASTER, 'POST', `/admin/keys/${created.id}/revoke`)).body.status, 'revoked');
    assert.equal((await call(MASTER, 'POST', `/admin/keys/${created.id}/rotate`)).status, 409);
    assert.equal((await call(MASTER, 'POST', `/admin/keys/${created.id}/rotate`, { grace_s: -1 })).status, 400);
  });

  it('creates endpoints whose model resolves, one name per project', async () => {
    await call(MASTER, 'POST', '/admin/projects', { id: 'ends', name: 'ends' });
    const created = await call(MASTER, 'POST', '/admin/endpoints', {
      project: 'ends',
      name: 'chat',
      model: 'fast',
      stream_profile: 'accounting',
      usage: 'always',
      error_style: 'event',
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.base_path, '/ends/chat/v1');
    assert.equal((await call(MASTER, 'POST', '/admin/endpoints', { project: 'ends', name: 'chat', model: 'mock/echo' })).status, 409);
    const unresolved = await call(MASTER, 'POST', '/admin/endpoints', { project: 'ends', name: 'x', model: 'nowhere/model' });
    assert.equal(unresolved.status, 400);
    assert.equal(unresolved.body.error.param, 'model');
    const badName = await call(MASTER, 'POST', '/admin/endpoints', { project: 'ends', name: 'a.b', model: 'fast' });
    assert.equal(badName.body.error.param, 'name');
    assert.equal((await call(MASTER, 'POST', '/admin/endpoints', { project: 'nope', name: 'x', model: 'fast' })).status, 404);
    const listed = await call(MASTER, 'GET', '/admin/endpoints?project=ends');
    assert.deepEqual(
      listed.body.data.map((e: { name: string }) => e.name),
      ['chat'],
    );
  });
});

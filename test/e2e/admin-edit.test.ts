import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminCall, chatWith, projectWithKey } from '../helpers/admin-client.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const MASTER = 'sk-master-admin-edit';

describe('the admin API edits and deletes (issue 27)', () => {
  let gw: TestGateway;
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => adminCall(gw.url, MASTER, method, path, body);
  const chat = (key: string, model = 'mock/echo') => chatWith(gw.url, key, { model });

  before(async () => {
    gw = await startGateway({
      auth: { master_key: MASTER },
      tiers: { gold: {}, silver: {} },
      model_list: [{ model_name: 'fast', model: 'mock/echo' }],
    });
  });
  after(() => gw?.close());

  it('PATCH /admin/projects/{project}: name, tier, budgets, models and metadata; null clears; absent fields are kept', async () => {
    assert.equal((await call('POST', '/admin/projects', { id: 'edit-p', name: 'P', tier: 'gold', budgets: { daily_usd: 5 } })).status, 201);
    const patched = await call('PATCH', '/admin/projects/edit-p', {
      name: 'Renamed',
      tier: 'silver',
      budgets: { monthly_usd: 40 },
      models: ['fast'],
      metadata: { owner: 'ops' },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(
      { ...patched.body, created_at: 'x' },
      {
        object: 'sluice.project',
        id: 'edit-p',
        name: 'Renamed',
        tier: 'silver',
        budgets: { daily_usd: 5, monthly_usd: 40 },
        models: ['fast'],
        metadata: { owner: 'ops' },
        created_at: 'x',
        deleted_at: null,
      },
    );
    const cleared = await call('PATCH', '/admin/projects/edit-p', { tier: null, budgets: { daily_usd: null }, metadata: null });
    assert.deepEqual([cleared.body.tier, cleared.body.budgets, cleared.body.metadata], [null, { daily_usd: null, monthly_usd: 40 }, null]);
    const listed = (await call('GET', '/admin/projects')).body.data.find((p: { id: string }) => p.id === 'edit-p');
    assert.equal(listed.name, 'Renamed');
  });

  it("a project's models bind its keys that list none, from the next request", async () => {
    const key = await projectWithKey(gw.url, MASTER, 'edit-models');
    assert.equal((await chat(key.key, 'fast')).status, 200);
    assert.equal((await call('PATCH', '/admin/projects/edit-models', { models: ['mock/other'] })).status, 200);
    const refused = await chat(key.key, 'fast');
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error.code, 'model_not_allowed');
    const own = await call('PATCH', `/admin/keys/${key.id}`, { models: ['fast'] });
    assert.deepEqual(own.body.models, ['fast']);
    assert.equal((await chat(key.key, 'fast')).status, 200);
  });

  it('PATCH /admin/keys/{key_id}: name, tier, models, budgets and expiry, each taking effect at once', async () => {
    const key = await projectWithKey(gw.url, MASTER, 'edit-k', { name: 'ci', tier: 'gold', budgets: { daily_usd: 1 } });
    assert.equal((await chat(key.key)).status, 200);
    const patched = await call('PATCH', `/admin/keys/${key.id}`, {
      name: 'deploy',
      tier: 'silver',
      models: ['fast'],
      budgets: { daily_usd: null, monthly_usd: 9 },
      expires_in_s: 3600,
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.name, 'deploy');
    assert.equal(patched.body.tier, 'silver');
    assert.deepEqual(patched.body.models, ['fast']);
    assert.deepEqual(patched.body.budgets, { daily_usd: null, monthly_usd: 9 });
    assert.ok(Date.parse(patched.body.expires_at) > Date.now());
    assert.ok(!('key' in patched.body), 'an edit never shows a secret');
    assert.equal((await chat(key.key, 'mock/echo')).status, 403, 'the new models apply at once');
    const expired = await call('PATCH', `/admin/keys/${key.id}`, { expires_at: new Date(Date.now() - 1000).toISOString() });
    assert.equal(expired.body.status, 'expired');
    assert.equal((await chat(key.key, 'fast')).body.error.code, 'api_key_expired');
    const never = await call('PATCH', `/admin/keys/${key.id}`, { expires_at: null });
    assert.equal(never.body.expires_at, null);
    assert.equal((await chat(key.key, 'fast')).status, 200);
  });

  it('disable and enable: a disabled key is a 401 api_key_disabled until enabled again', async () => {
    const key = await projectWithKey(gw.url, MASTER, 'edit-d');
    const disabled = await call('PATCH', `/admin/keys/${key.id}`, { disabled: true });
    assert.equal(disabled.body.status, 'disabled');
    assert.ok(disabled.body.disabled_at);
    const refused = await chat(key.key);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, 'api_key_disabled');
    const again = await call('PATCH', `/admin/keys/${key.id}`, { disabled: true });
    assert.equal(again.body.disabled_at, disabled.body.disabled_at, 'the first time is kept');
    const enabled = await call('PATCH', `/admin/keys/${key.id}`, { disabled: false });
    assert.deepEqual([enabled.body.status, enabled.body.disabled_at], ['active', null]);
    assert.equal((await chat(key.key)).status, 200);
  });

  it('DELETE /admin/keys/{key_id}: refused as unknown, hidden from listings, its ledger rows kept', async () => {
    const key = await projectWithKey(gw.url, MASTER, 'edit-del');
    const used = await chat(key.key);
    assert.equal(used.status, 200);
    const deleted = await call('DELETE', `/admin/keys/${key.id}`);
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal(deleted.body.status, 'deleted');
    const refused = await chat(key.key);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, 'invalid_api_key');
    assert.ok(!(await call('GET', '/admin/keys?project=edit-del')).body.data.some((k: { id: string }) => k.id === key.id));
    const all = await call('GET', '/admin/keys?project=edit-del&include_deleted=true');
    assert.equal(all.body.data.find((k: { id: string }) => k.id === key.id)?.status, 'deleted');
    // Its request and its cost stay in the log.
    const log = await call('GET', `/v1/requests?key_id=${key.id}`);
    assert.deepEqual(
      log.body.data.map((r: { request_id: string }) => r.request_id),
      [used.requestId],
    );
    assert.equal(log.body.data[0].project_id, 'edit-del');
    for (const [method, path] of [
      ['PATCH', `/admin/keys/${key.id}`],
      ['DELETE', `/admin/keys/${key.id}`],
      ['POST', `/admin/keys/${key.id}/rotate`],
      ['POST', `/admin/keys/${key.id}/revoke`],
    ] as const) {
      const res = await call(method, path, {});
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(res.body.error.code, 'key_not_found');
    }
  });

  it('DELETE /admin/projects/{project}: 409 while it has live keys; ?force deletes them with it; its id stays taken', async () => {
    const key = await projectWithKey(gw.url, MASTER, 'edit-proj');
    const used = await chat(key.key);
    assert.equal((await call('POST', '/admin/endpoints', { project: 'edit-proj', name: 'chat', model: 'fast' })).status, 201);
    const refused = await call('DELETE', '/admin/projects/edit-proj');
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'project_has_keys');
    assert.equal(refused.body.error.param, 'force');
    assert.equal((await call('DELETE', '/admin/projects/edit-proj?force=yes')).body.error.param, 'force');
    const deleted = await call('DELETE', '/admin/projects/edit-proj?force=true');
    assert.equal(deleted.status, 200, deleted.text);
    assert.ok(deleted.body.deleted_at);
    assert.deepEqual(deleted.body.deleted_keys, [key.id]);
    assert.equal((await chat(key.key)).body.error.code, 'invalid_api_key');
    assert.equal((await chatWith(gw.url, MASTER, { model: 'fast' }, '/edit-proj/chat/v1/chat/completions')).status, 404);
    assert.ok(!(await call('GET', '/admin/projects')).body.data.some((p: { id: string }) => p.id === 'edit-proj'));
    assert.ok((await call('GET', '/admin/projects?include_deleted=true')).body.data.some((p: { id: string }) => p.id === 'edit-proj'));
    assert.equal((await call('GET', `/v1/requests?project_id=edit-proj`)).body.data[0].request_id, used.requestId);
    assert.equal((await call('POST', '/admin/projects', { id: 'edit-proj', name: 'again' })).status, 409);
    assert.equal((await call('PATCH', '/admin/projects/edit-proj', { name: 'x' })).status, 404);
    assert.equal((await call('POST', '/admin/keys', { project: 'edit-proj' })).body.error.code, 'project_not_found');

    // Without live keys (its only key revoked) it goes without force.
    const other = await projectWithKey(gw.url, MASTER, 'edit-proj-2');
    await call('POST', `/admin/keys/${other.id}/revoke`);
    assert.equal((await call('DELETE', '/admin/projects/edit-proj-2')).status, 200);
  });

  it('PATCH and DELETE /admin/endpoints/{project}/{endpoint}', async () => {
    await call('POST', '/admin/projects', { id: 'edit-e', name: 'E' });
    await call('POST', '/admin/endpoints', { project: 'edit-e', name: 'chat', model: 'fast', usage: 'always' });
    const patched = await call('PATCH', '/admin/endpoints/edit-e/chat', { model: 'mock/echo', usage: null, error_style: 'event' });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual([patched.body.model, patched.body.usage, patched.body.error_style], ['mock/echo', null, 'event']);
    const bad = await call('PATCH', '/admin/endpoints/edit-e/chat', { model: 'nowhere/none' });
    assert.deepEqual([bad.status, bad.body.error.param], [400, 'model']);
    const via = () => chatWith(gw.url, MASTER, { model: undefined }, '/edit-e/chat/v1/chat/completions');
    assert.equal((await via()).status, 200);
    const deleted = await call('DELETE', '/admin/endpoints/edit-e/chat');
    assert.deepEqual([deleted.status, deleted.body.deleted], [200, true]);
    assert.equal((await via()).status, 404);
    assert.equal((await call('DELETE', '/admin/endpoints/edit-e/chat')).body.error.code, 'endpoint_not_found');
  });

  it('bad PATCH bodies are 400s naming the field; fields that cannot change are named too; unknown ids are 404s', async () => {
    const key = await projectWithKey(gw.url, MASTER, 'edit-bad');
    await call('POST', '/admin/endpoints', { project: 'edit-bad', name: 'chat', model: 'fast' });
    for (const [path, body, param] of [
      ['/admin/projects/edit-bad', { id: 'other' }, 'id'],
      ['/admin/projects/edit-bad', { name: '' }, 'name'],
      ['/admin/projects/edit-bad', { tier: 'platinum' }, 'tier'],
      ['/admin/projects/edit-bad', { budgets: { daily_usd: -1 } }, 'budgets.daily_usd'],
      ['/admin/projects/edit-bad', { metadata: { a: 1 } }, 'metadata.a'],
      ['/admin/projects/edit-bad', { colour: 'red' }, 'colour'],
      [`/admin/keys/${key.id}`, { project: 'other' }, 'project'],
      [`/admin/keys/${key.id}`, { id: 'x' }, 'id'],
      [`/admin/keys/${key.id}`, { admin: true }, 'admin'],
      [`/admin/keys/${key.id}`, { disabled: 'yes' }, 'disabled'],
      [`/admin/keys/${key.id}`, { models: 'fast' }, 'models'],
      [`/admin/keys/${key.id}`, { expires_at: 'tomorrow' }, 'expires_at'],
      [`/admin/keys/${key.id}`, { expires_at: null, expires_in_s: 60 }, 'expires_in_s'],
      ['/admin/endpoints/edit-bad/chat', { name: 'other' }, 'name'],
      ['/admin/endpoints/edit-bad/chat', { stream_profile: 'nope' }, 'stream_profile'],
    ] as const) {
      const res = await call('PATCH', path, body);
      assert.equal(res.status, 400, `${path} ${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.body.error.param, param, `${path} ${JSON.stringify(body)}`);
      assert.equal(res.body.error.type, 'invalid_request_error');
    }
    const fixed = await call('PATCH', `/admin/keys/${key.id}`, { project: 'other' });
    assert.match(fixed.body.error.message, /project of a key cannot be changed/);
    for (const [path, code] of [
      ['/admin/projects/nope', 'project_not_found'],
      ['/admin/keys/ffffffffffffffff', 'key_not_found'],
      ['/admin/endpoints/edit-bad/nope', 'endpoint_not_found'],
    ] as const) {
      for (const method of ['PATCH', 'DELETE'] as const) {
        const res = await call(method, path, {});
        assert.equal(res.status, 404, `${method} ${path}`);
        assert.equal(res.body.error.code, code);
      }
    }
    const noBody = await fetch(`${gw.url}/admin/keys/${key.id}`, { method: 'PATCH', headers: { authorization: `Bearer ${MASTER}` } });
    assert.equal(noBody.status, 415, 'a PATCH declares its JSON body');
  });

  it('GET /admin/openapi.json: the OpenAPI 3.1 document, for admins only', async () => {
    const doc = await call('GET', '/admin/openapi.json');
    assert.equal(doc.status, 200);
    assert.equal(doc.body.openapi, '3.1.0');
    assert.ok(doc.body.paths['/admin/keys/{key_id}'].patch.requestBody);
    assert.equal((await adminCall(gw.url, undefined, 'GET', '/admin/openapi.json')).status, 401);
  });

  it('an admin key may edit; a project key may not', async () => {
    const admin = await projectWithKey(gw.url, MASTER, 'edit-auth', { admin: true });
    const plain = await projectWithKey(gw.url, MASTER, 'edit-auth');
    assert.equal((await adminCall(gw.url, plain.key, 'PATCH', `/admin/keys/${plain.id}`, { name: 'x' })).status, 403);
    assert.equal((await adminCall(gw.url, plain.key, 'DELETE', `/admin/keys/${admin.id}`)).status, 403);
    assert.equal((await adminCall(gw.url, admin.key, 'PATCH', `/admin/keys/${plain.id}`, { name: 'x' })).status, 200);
  });
});

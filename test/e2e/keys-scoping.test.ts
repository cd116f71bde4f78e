import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminCall, chatWith, projectWithKey } from '../helpers/admin-client.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const MASTER = 'sk-master-scoping-test';

describe("the request log and stored responses are scoped to the caller's project", () => {
  let gw: TestGateway;
  let keyA: Record<string, any>;
  let keyB: Record<string, any>;
  let adminKey: Record<string, any>;
  const requests: Record<'a' | 'b' | 'master', string> = { a: '', b: '', master: '' };
  const responses: Record<'a' | 'b', string> = { a: '', b: '' };

  async function createResponse(key: string, body: Record<string, unknown>) {
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: 'mock/echo', input: 'remember me', ...body }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }

  before(async () => {
    gw = await startGateway({ auth: { master_key: MASTER }, ledger: { flush_interval_ms: 10 } });
    keyA = await projectWithKey(gw.url, MASTER, 'team-a');
    keyB = await projectWithKey(gw.url, MASTER, 'team-b');
    adminKey = await projectWithKey(gw.url, MASTER, 'team-a', { admin: true });
    requests.a = (await chatWith(gw.url, keyA.key, { model: 'mock/echo' })).requestId;
    requests.b = (await chatWith(gw.url, keyB.key, { model: 'mock/echo' })).requestId;
    requests.master = (await chatWith(gw.url, MASTER, { model: 'mock/echo' })).requestId;
    responses.a = (await createResponse(keyA.key, {})).body.id;
    responses.b = (await createResponse(keyB.key, {})).body.id;
  });
  after(() => gw?.close());

  const get = (key: string, path: string) => adminCall(gw.url, key, 'GET', path);
  const listed = async (key: string) => (await get(key, '/v1/requests?limit=1000')).body.data.map((r: { request_id: string }) => r.request_id);

  it('GET /v1/requests lists the key project only; the master key and admin keys see every project', async () => {
    const a = await listed(keyA.key);
    assert.ok(a.includes(requests.a));
    assert.ok(!a.includes(requests.b) && !a.includes(requests.master));
    for (const all of [MASTER, adminKey.key]) {
      const seen = await listed(all);
      for (const id of Object.values(requests)) assert.ok(seen.includes(id), id);
    }
    const follow = await get(keyB.key, '/v1/requests?order=asc');
    assert.ok(follow.body.data.every((r: { project_id: string }) => r.project_id === 'team-b'));
  });

  it("GET /v1/requests/{id} of another project's request is a 404, like an unknown id", async () => {
    assert.equal((await get(keyA.key, `/v1/requests/${requests.a}`)).body.project_id, 'team-a');
    for (const id of [requests.b, requests.master]) {
      const res = await get(keyA.key, `/v1/requests/${id}`);
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'request_not_found');
    }
    assert.equal((await get(adminKey.key, `/v1/requests/${requests.b}`)).status, 200);
  });

  it("GET /v1/responses/{id} and previous_response_id reach the caller's project's responses only", async () => {
    assert.equal((await get(keyA.key, `/v1/responses/${responses.a}`)).status, 200);
    const other = await get(keyA.key, `/v1/responses/${responses.b}`);
    assert.equal(other.status, 404);
    assert.equal(other.body.error.code, 'response_not_found');
    assert.equal((await get(MASTER, `/v1/responses/${responses.b}`)).status, 200);
    assert.equal((await get(adminKey.key, `/v1/responses/${responses.b}`)).status, 200);

    const continued = await createResponse(keyA.key, { previous_response_id: responses.a, input: 'again' });
    assert.equal(continued.status, 200);
    const stolen = await createResponse(keyA.key, { previous_response_id: responses.b, input: 'what did B say?' });
    assert.equal(stolen.status, 404);
    assert.equal(stolen.body.error.param, 'previous_response_id');
  });
});

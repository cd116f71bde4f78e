import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClientCredentials } from './oauth-token.ts';

const settings = { token_url: 'http://127.0.0.1:1/token', client_id: 'id', client_secret: 'secret', scope: 'tools' };

function tokenEndpoint(expiresIn: number) {
  const bodies: string[] = [];
  const fetchImpl = (async (_url: string, init: RequestInit) => {
    bodies.push(String(init.body));
    return Response.json({ access_token: `t${bodies.length}`, expires_in: expiresIn });
  }) as typeof fetch;
  return { bodies, fetchImpl };
}

describe('ClientCredentials', () => {
  it('asks once with the client credentials grant and reuses the token until shortly before it expires', async () => {
    let now = 0;
    const { bodies, fetchImpl } = tokenEndpoint(3600);
    const tokens = new ClientCredentials(settings, fetchImpl, () => now);
    assert.deepEqual(await Promise.all([tokens.get(), tokens.get()]), ['t1', 't1']);
    assert.equal(bodies.length, 1);
    assert.equal(bodies[0], 'grant_type=client_credentials&client_id=id&client_secret=secret&scope=tools');
    now = 3_500_000;
    assert.equal(await tokens.get(), 't1');
    now = 3_580_000;
    assert.equal(await tokens.get(), 't2');
  });

  it('asks again after forget(), and fails clearly on a refusal', async () => {
    const { fetchImpl } = tokenEndpoint(60);
    const tokens = new ClientCredentials(settings, fetchImpl, () => 0);
    await tokens.get();
    tokens.forget();
    assert.equal(await tokens.get(), 't2');
    const refusing = new ClientCredentials(settings, (async () => new Response('no', { status: 401 })) as typeof fetch);
    await assert.rejects(refusing.get(), /answered 401/);
  });
});

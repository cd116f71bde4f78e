import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { UpstreamClient } from '../../upstream/http-client.ts';
import { type FakeUpstream, startFakeUpstream } from '../../../test/helpers/fake-upstream.ts';
import { createEntraTokenSource, entraTokenUrl } from './entra-token.ts';

describe('createEntraTokenSource', () => {
  let upstream: FakeUpstream;
  const client = new UpstreamClient({ connectTimeoutMs: 2000, headersTimeoutMs: 2000 });
  before(async () => {
    upstream = await startFakeUpstream();
  });
  after(async () => {
    await client.close();
    await upstream.close();
  });

  const credentials = () => ({ tenantId: 't', clientId: 'c', clientSecret: 's3cret', tokenUrl: `${upstream.url}/t/token` });
  /** A token endpoint that hands out numbered tokens valid for `expiresIn` seconds. */
  function serveTokens(expiresIn: number) {
    let issued = 0;
    upstream.reply(() => ({
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token_type: 'Bearer', expires_in: expiresIn, access_token: `tok-${++issued}` }),
    }));
    return () => issued;
  }

  it("is Entra's own endpoint for the tenant by default", () => {
    assert.equal(entraTokenUrl('contoso.onmicrosoft.com'), 'https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token');
  });

  it('keeps a token until five minutes before it expires, then asks again', async () => {
    const issued = serveTokens(3600);
    let clock = 1_000_000;
    const token = createEntraTokenSource('azure', credentials(), client, () => clock);
    assert.equal(await token(), 'tok-1');
    clock += 54 * 60_000;
    assert.equal(await token(), 'tok-1');
    clock += 2 * 60_000;
    assert.equal(await token(), 'tok-2');
    assert.equal(issued(), 2);
  });

  it('asks once for calls that need a token at the same time', async () => {
    const issued = serveTokens(3600);
    const token = createEntraTokenSource('azure', credentials(), client);
    assert.deepEqual(await Promise.all([token(), token(), token()]), ['tok-1', 'tok-1', 'tok-1']);
    assert.equal(issued(), 1);
  });

  it('renews a short-lived token at half its life', async () => {
    serveTokens(120);
    let clock = 0;
    const token = createEntraTokenSource('azure', credentials(), client, () => clock);
    assert.equal(await token(), 'tok-1');
    clock = 59_000;
    assert.equal(await token(), 'tok-1');
    clock = 61_000;
    assert.equal(await token(), 'tok-2');
  });

  it('is a 502 upstream_authentication_failed when Entra refuses the credentials, without the secret', async () => {
    upstream.reply({
      status: 401,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.' }),
    });
    const err = await createEntraTokenSource('azure', credentials(), client)().then(
      () => assert.fail('expected a refusal'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof GatewayError);
    assert.equal(err.status, 502);
    assert.equal(err.code, 'upstream_authentication_failed');
    assert.equal(err.upstreamCode, 'invalid_client');
    assert.match(err.message, /AADSTS7000215/);
    assert.doesNotMatch(err.message, /s3cret/);
  });

  it('is a 502 for an answer without a token', async () => {
    upstream.reply({ headers: { 'content-type': 'application/json' }, body: '{"token_type":"Bearer"}' });
    await assert.rejects(createEntraTokenSource('azure', credentials(), client)(), { code: 'upstream_malformed_stream', status: 502 });
  });
});

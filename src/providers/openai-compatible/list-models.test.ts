import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FakeUpstream, startFakeUpstream } from '../../../test/helpers/fake-upstream.ts';
import { UpstreamClient } from '../../upstream/http-client.ts';
import { createModelList } from './list-models.ts';

describe('createModelList', () => {
  let upstream: FakeUpstream;
  const client = new UpstreamClient({ connectTimeoutMs: 1000, headersTimeoutMs: 5000 });
  let clock = 0;
  const timings = { ttlMs: 1000, failureTtlMs: 100, timeoutMs: 500, now: () => clock };
  const target = () => ({ name: 'up', baseUrl: `${upstream.url}/v1/`, apiKey: 'sk-1', headers: { 'x-extra': 'yes' }, models: ['static'] });
  const listCalls = () => upstream.requests.filter((r) => r.url === '/v1/models').length;

  before(async () => {
    upstream = await startFakeUpstream();
  });
  after(async () => {
    await client.close();
    await upstream.close();
  });

  it('asks GET {base_url}/models with the key and headers, keeps it for the TTL, then asks again', async () => {
    upstream.reply({ body: JSON.stringify({ data: [{ id: 'a' }, { id: 'static' }, { id: 7 }] }) });
    const list = createModelList(target(), client, timings);
    // Concurrent callers share one request.
    assert.deepEqual(await Promise.all([list(), list()]), [
      ['static', 'a'],
      ['static', 'a'],
    ]);
    assert.equal(listCalls(), 1);
    const asked = upstream.requests.at(-1);
    assert.equal(asked?.headers.authorization, 'Bearer sk-1');
    assert.equal(asked?.headers['x-extra'], 'yes');
    clock += 999;
    await list();
    assert.equal(listCalls(), 1);
    clock += 2;
    upstream.reply({ body: JSON.stringify({ data: [{ id: 'b' }] }) });
    assert.deepEqual(await list(), ['static', 'b']);
    assert.equal(listCalls(), 2);
  });

  it('falls back to the static models on an error status, a body that is not a list, or a timeout, and retries after failureTtlMs', async () => {
    for (const reply of [
      { status: 401, body: '{"error":{}}' },
      { body: 'not json' },
      { body: '{"models":[]}' },
      { headerDelayMs: 800, body: '{"data":[]}' },
    ]) {
      upstream.reply(reply);
      const list = createModelList(target(), client, timings);
      const before = listCalls();
      assert.deepEqual(await list(), ['static'], JSON.stringify(reply));
      clock += 99;
      await list();
      assert.equal(listCalls(), before + 1, 'a failure is remembered for failureTtlMs');
      clock += 2;
      upstream.reply({ body: JSON.stringify({ data: [{ id: 'back' }] }) });
      assert.deepEqual(await list(), ['static', 'back']);
    }
  });
});

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

/** A loopback port nothing listens on (just released): an upstream that is down. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

interface ModelList {
  object: string;
  data: { id: string; object: string; created: number; owned_by: string }[];
}

describe('GET /v1/models', () => {
  let gw: TestGateway;
  let up: FakeUpstream;
  let slow: FakeUpstream;

  before(async () => {
    up = await startFakeUpstream();
    up.reply((req) =>
      req.url === '/v1/models'
        ? {
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              object: 'list',
              data: [{ id: 'llama-70b', object: 'model', owned_by: 'x' }, { id: 'qwen-32b' }, { name: 'no id' }],
            }),
          }
        : { status: 404, body: 'not here' },
    );
    slow = await startFakeUpstream();
    slow.reply({ headerDelayMs: 6_000, headers: { 'content-type': 'application/json' }, body: '{"data":[{"id":"too-late"}]}' });
    gw = await startGateway({
      providers: {
        up: { base_url: `${up.url}/v1`, api_key: 'sk-upstream', models: ['declared'] },
        down: { base_url: `http://127.0.0.1:${await closedPort()}/v1`, models: ['static-1'] },
        slow: { base_url: `${slow.url}/v1`, models: ['slow-static'] },
        anthropic: { api_key: 'sk-ant-unused' },
      },
      model_list: [{ model_name: 'fast', model: 'up/llama-70b' }],
    });
  });
  after(async () => {
    await gw.close();
    await up.close();
    await slow.close();
  });

  async function list(): Promise<{ body: ModelList; ms: number }> {
    const started = performance.now();
    const res = await fetch(`${gw.url}/v1/models`);
    assert.equal(res.status, 200);
    return { body: (await res.json()) as ModelList, ms: performance.now() - started };
  }

  it('lists aliases, each upstream own models, static ones where an upstream is down or slow, native and mock models', async () => {
    const { body, ms } = await list();
    assert.equal(body.object, 'list');
    const ids = body.data.map((m) => m.id);
    assert.equal(ids[0], 'fast', 'aliases first');
    for (const id of ['up/declared', 'up/llama-70b', 'up/qwen-32b', 'down/static-1', 'slow/slow-static', 'mock/echo', 'mock/slow']) {
      assert.ok(ids.includes(id), `${id} in ${ids.join(' ')}`);
    }
    assert.ok(!ids.includes('slow/too-late'));
    assert.ok(
      ids.some((id) => id.startsWith('anthropic/claude-')),
      'the pricing registry models of a native provider',
    );
    assert.equal(new Set(ids).size, ids.length, 'no id twice');
    for (const m of body.data) {
      assert.equal(m.object, 'model');
      assert.equal(typeof m.created, 'number');
      assert.equal(m.owned_by, m.id === 'fast' ? 'up' : m.id.slice(0, m.id.indexOf('/')));
    }
    // The slow upstream costs its timeout (2.5 s), not its 6 s.
    assert.ok(ms < 5_000, `took ${ms} ms`);
    const asked = up.requests.filter((r) => r.url === '/v1/models');
    assert.equal(asked.length, 1);
    assert.equal(asked[0].method, 'GET');
    assert.equal(asked[0].headers.authorization, 'Bearer sk-upstream');
  });

  it('reuses the lists: a second call asks no upstream again and does not wait for the slow one', async () => {
    const { body, ms } = await list();
    assert.ok(body.data.some((m) => m.id === 'up/qwen-32b'));
    assert.ok(body.data.some((m) => m.id === 'slow/slow-static'));
    assert.equal(up.requests.filter((r) => r.url === '/v1/models').length, 1);
    assert.equal(slow.requests.length, 1);
    assert.ok(ms < 1_000, `took ${ms} ms`);
  });
});

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { adminCall, chatWith, projectWithKey } from '../helpers/admin-client.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { adminQuery, createTestSchema, databaseUrl, type TestSchema } from '../helpers/postgres.ts';

const MASTER = 'sk-master-edit-instances';
const redisUrl = process.env.REDIS_URL;

/** Polls `probe` every 20 ms until it gives `wanted` (5 s at most): the ms it took. */
async function msUntil<T>(wanted: T, probe: () => Promise<T>): Promise<number> {
  const started = Date.now();
  let seen = await probe();
  while (seen !== wanted && Date.now() - started < 5_000) {
    await sleep(20);
    seen = await probe();
  }
  assert.equal(seen, wanted);
  return Date.now() - started;
}

describe(
  'an edit or a deletion on one instance takes effect on another sharing PostgreSQL within 1 s (keys cached for the default 10 s)',
  { skip: !databaseUrl ? 'DATABASE_URL not set' : !redisUrl ? 'REDIS_URL not set' : false },
  () => {
    let schema: TestSchema;
    let a: TestGateway;
    let b: TestGateway;

    before(async () => {
      schema = await createTestSchema();
      const config = {
        auth: { master_key: MASTER, key_pepper: 'edit-instances' },
        store: { database_url: schema.url },
        limits: { redis_url: redisUrl, redis_prefix: `sluice-test:${process.pid}:${randomBytes(4).toString('hex')}:` },
        tiers: { std: { requests_per_minute: 10_000 }, tight: { requests_per_minute: 1 } },
        default_tier: 'std',
        model_list: [{ model_name: 'fast', model: 'mock/echo' }],
      };
      a = await startGateway(config);
      b = await startGateway(config);
    });
    after(async () => {
      await a?.close();
      await b?.close();
      await schema?.drop();
    });

    const onB = async (key: string, path?: string, model = 'mock/echo') => (await chatWith(b.url, key, { model }, path)).status;
    const onA = (method: 'PATCH' | 'DELETE', path: string, body?: unknown) => adminCall(a.url, MASTER, method, path, body);

    it('a key disabled, enabled, narrowed and deleted on A', async () => {
      const key = await projectWithKey(a.url, MASTER, 'spread-key');
      assert.equal(await onB(key.key), 200, 'B has it cached');
      assert.equal((await onA('PATCH', `/admin/keys/${key.id}`, { disabled: true })).status, 200);
      assert.ok((await msUntil(401, () => onB(key.key))) < 1_000);
      assert.equal((await chatWith(b.url, key.key, { model: 'mock/echo' })).body.error.code, 'api_key_disabled');
      await onA('PATCH', `/admin/keys/${key.id}`, { disabled: false });
      assert.ok((await msUntil(200, () => onB(key.key))) < 1_000);
      await onA('PATCH', `/admin/keys/${key.id}`, { models: ['fast'] });
      assert.ok((await msUntil(403, () => onB(key.key))) < 1_000);
      await onA('DELETE', `/admin/keys/${key.id}`);
      assert.ok((await msUntil(401, () => onB(key.key, undefined, 'fast'))) < 1_000);
      assert.equal((await chatWith(b.url, key.key, { model: 'fast' })).body.error.code, 'invalid_api_key');
    });

    it("a project's tier and models edited on A bind its cached keys on B", async () => {
      const key = await projectWithKey(a.url, MASTER, 'spread-project');
      assert.equal(await onB(key.key), 200);
      assert.equal((await onA('PATCH', '/admin/projects/spread-project', { models: ['fast'] })).status, 200);
      assert.ok((await msUntil(403, () => onB(key.key))) < 1_000);
      await onA('PATCH', '/admin/projects/spread-project', { models: null, tier: 'tight' });
      // One request a minute under the new tier: the second is refused once B has heard.
      assert.ok((await msUntil(429, () => onB(key.key))) < 1_000);
    });

    it('a project deleted with its keys, and an endpoint edited then deleted, on A', async () => {
      const key = await projectWithKey(a.url, MASTER, 'spread-gone');
      await adminCall(a.url, MASTER, 'POST', '/admin/endpoints', { project: 'spread-gone', name: 'chat', model: 'mock/echo' });
      const path = '/spread-gone/chat/v1/chat/completions';
      const modelOnB = async () => (await chatWith(b.url, key.key, { model: undefined }, path)).body.model as string;
      assert.equal(await modelOnB(), 'mock/echo');

      assert.equal((await onA('PATCH', '/admin/endpoints/spread-gone/chat', { model: 'fast' })).status, 200);
      assert.ok((await msUntil('fast', modelOnB)) < 1_000);
      await onA('DELETE', '/admin/endpoints/spread-gone/chat');
      assert.ok((await msUntil(404, () => onB(MASTER, path))) < 1_000);

      assert.equal((await onA('DELETE', '/admin/projects/spread-gone?force=true')).status, 200);
      assert.ok((await msUntil(401, () => onB(key.key))) < 1_000);
      // The ledger keeps the key's and the project's rows (written by B's ledger writer in its next batch: polled).
      const count = async () =>
        (
          (await adminQuery(schema.url, 'select count(*)::int as n from ledger where key_id = $1 and project_id = $2', [key.id, 'spread-gone']))
            .rows[0] as { n: number }
        ).n;
      let n = await count();
      for (let polls = 0; n === 0 && polls < 200; polls++) {
        await new Promise((r) => setTimeout(r, 50));
        n = await count();
      }
      assert.ok(n >= 1);
    });
  },
);

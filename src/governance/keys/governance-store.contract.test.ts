import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestSchema, noPostgres } from '../../../test/helpers/postgres.ts';
import { ledgerRecord } from '../../../test/helpers/ledger-records.ts';
import { LedgerStore } from '../../store/ledger-store.ts';
import { openDatabase } from '../../store/open-database.ts';
import type { OpenedDatabase, StoreLocation } from '../../store/store-location.ts';
import { ResponsesStore } from '../../store/responses-store.ts';
import { type ApiKey, GovernanceStore, type Project } from './governance-store.ts';

const project = (over: Partial<Project> = {}): Project => ({
  id: 'proj_a',
  name: 'Team A',
  tier: null,
  budgetDayUsd: null,
  budgetMonthUsd: null,
  allowedModels: null,
  metadata: null,
  createdAt: 1_760_000_000_000,
  deletedAt: null,
  ...over,
});

const key = (over: Partial<ApiKey> = {}): ApiKey => ({
  id: '0123456789abcdef',
  projectId: 'proj_a',
  name: null,
  secretHash: 'aa'.repeat(32),
  previousHash: null,
  previousValidUntil: null,
  tier: null,
  allowedModels: null,
  budgetDayUsd: null,
  budgetMonthUsd: null,
  admin: false,
  createdAt: 1_760_000_000_001,
  expiresAt: null,
  revokedAt: null,
  lastUsedAt: null,
  disabledAt: null,
  deletedAt: null,
  ...over,
});

/** The same contract on both engines, like src/store/ledger-store.contract.test.ts. */
function governanceStoreContract(
  name: string,
  site: () => Promise<{ location: StoreLocation; remove: () => Promise<void> }>,
  skip: string | false = false,
) {
  describe(`governance store contract: ${name}`, { skip }, () => {
    let opened: OpenedDatabase;
    let remove: () => Promise<void>;
    let store: GovernanceStore;

    beforeEach(async () => {
      const where = await site();
      remove = where.remove;
      opened = await openDatabase(where.location);
      store = new GovernanceStore(opened.db);
    });
    afterEach(async () => {
      await opened.db.destroy();
      await remove();
    });

    it('creates projects once, lists them in creation order, round-trips every field', async () => {
      const full = project({ tier: 'gold', budgetDayUsd: 1.25, budgetMonthUsd: 30, allowedModels: ['fast'], metadata: { owner: 'ops' } });
      assert.equal(await store.createProject(full), true);
      assert.equal(await store.createProject(project({ name: 'clash' })), false);
      assert.equal(await store.createProject(project({ id: 'proj_b', createdAt: full.createdAt + 1 })), true);
      assert.deepEqual(await store.getProject('proj_a'), full);
      assert.deepEqual(
        (await store.listProjects()).map((p) => p.id),
        ['proj_a', 'proj_b'],
      );
      assert.equal(await store.getProject('nope'), undefined);
    });

    it('keys: created once, found with their project, listed per project, every field kept', async () => {
      await store.createProject(project({ tier: 'silver', budgetMonthUsd: 9 }));
      await store.createProject(project({ id: 'proj_b' }));
      const full = key({
        name: 'ci',
        tier: 'gold',
        allowedModels: ['fast', 'mock/echo'],
        budgetDayUsd: 0.5,
        budgetMonthUsd: 10,
        admin: true,
        expiresAt: 1_800_000_000_000,
      });
      assert.equal(await store.createKey(full), true);
      assert.equal(await store.createKey(key({ name: 'clash' })), false);
      await store.createKey(key({ id: 'fedcba9876543210', projectId: 'proj_b' }));
      assert.deepEqual(await store.getKey(full.id), full);
      const found = await store.findKeyWithProject(full.id);
      assert.deepEqual(found?.key, full);
      assert.equal(found?.project.tier, 'silver');
      assert.equal(found?.project.budgetMonthUsd, 9);
      assert.equal(await store.findKeyWithProject('ffffffffffffffff'), undefined);
      assert.deepEqual(
        (await store.listKeys('proj_b')).map((k) => k.id),
        ['fedcba9876543210'],
      );
      assert.equal((await store.listKeys()).length, 2);
    });

    it('revoking keeps the first revocation time; rotating swaps the hash, with or without a grace period', async () => {
      await store.createProject(project());
      await store.createKey(key());
      const rotated = await store.rotateKey(key(), 'bb'.repeat(32), 1_760_000_060_000);
      assert.equal(rotated, true);
      const afterRotation = await store.getKey(key().id);
      assert.equal(afterRotation?.secretHash, 'bb'.repeat(32));
      assert.equal(afterRotation?.previousHash, 'aa'.repeat(32));
      assert.equal(afterRotation?.previousValidUntil, 1_760_000_060_000);
      // A rotation based on a stale read changes nothing.
      assert.equal(await store.rotateKey(key(), 'cc'.repeat(32), null), false);
      assert.equal(await store.rotateKey(afterRotation as ApiKey, 'cc'.repeat(32), null), true);
      assert.equal((await store.getKey(key().id))?.previousHash, null);

      assert.equal((await store.revokeKey(key().id, 5))?.revokedAt, 5);
      assert.equal((await store.revokeKey(key().id, 9))?.revokedAt, 5);
      assert.equal(await store.revokeKey('ffffffffffffffff', 5), undefined);
      const revoked = (await store.getKey(key().id)) as ApiKey;
      assert.equal(await store.rotateKey(revoked, 'dd'.repeat(32), null), false);

      await store.touchKey(key().id, 1_760_000_100_000);
      assert.equal((await store.getKey(key().id))?.lastUsedAt, 1_760_000_100_000);
    });

    it('updates write only the fields given; a deleted key or project is neither updated, found with its project, nor listed by default', async () => {
      await store.createProject(project({ tier: 'gold', budgetDayUsd: 3 }));
      await store.createKey(key({ name: 'ci', budgetDayUsd: 1 }));
      assert.equal(await store.updateKey(key().id, { name: null, tier: 'silver', budgetDayUsd: null, disabledAt: 7 }), true);
      assert.deepEqual(await store.getKey(key().id), key({ tier: 'silver', disabledAt: 7 }));
      assert.equal(await store.updateKey('ffffffffffffffff', { name: 'x' }), false);
      assert.equal(await store.updateProject('proj_a', { name: 'Renamed', allowedModels: ['fast'], metadata: { team: 'a' } }), true);
      assert.deepEqual(
        await store.getProject('proj_a'),
        project({ name: 'Renamed', tier: 'gold', budgetDayUsd: 3, allowedModels: ['fast'], metadata: { team: 'a' } }),
      );
      assert.deepEqual((await store.findKeyWithProject(key().id))?.project.allowedModels, ['fast']);

      assert.equal(await store.deleteKey(key().id, 9), true);
      assert.equal(await store.deleteKey(key().id, 10), false);
      assert.equal((await store.getKey(key().id))?.deletedAt, 9);
      assert.equal(await store.findKeyWithProject(key().id), undefined);
      assert.equal(await store.updateKey(key().id, { name: 'x' }), false);
      assert.deepEqual(await store.listKeys(), []);
      assert.deepEqual(
        (await store.listKeys('proj_a', true)).map((k) => k.id),
        [key().id],
      );
    });

    it('deleting a project deletes its keys softly and its endpoints for good, in one go', async () => {
      await store.createProject(project());
      await store.createProject(project({ id: 'proj_b', createdAt: 2 }));
      await store.createKey(key());
      await store.createKey(key({ id: 'fedcba9876543210', revokedAt: 4 }));
      await store.createKey(key({ id: '1111111111111111', projectId: 'proj_b' }));
      const endpoint = {
        projectId: 'proj_a',
        name: 'chat',
        model: 'm',
        streamProfile: null,
        usage: null,
        errorStyle: null,
        vendorEvents: null,
        cache: null,
        createdAt: 1,
      };
      await store.createEndpoint(endpoint);
      assert.deepEqual(await store.liveKeyIds('proj_a'), [key().id]);
      assert.equal(await store.deleteProject('proj_a', 11), true);
      assert.equal(await store.deleteProject('proj_a', 12), false);
      assert.equal((await store.getProject('proj_a'))?.deletedAt, 11);
      assert.deepEqual(
        (await store.listProjects()).map((p) => p.id),
        ['proj_b'],
      );
      assert.equal((await store.listProjects(true)).length, 2);
      assert.equal((await store.getKey(key().id))?.deletedAt, 11);
      assert.deepEqual(await store.liveKeyIds('proj_a'), []);
      assert.equal(await store.getEndpoint('proj_a', 'chat'), undefined);
      assert.equal((await store.getKey('1111111111111111'))?.deletedAt, null);
      assert.equal(await store.updateProject('proj_a', { name: 'x' }), false);
      // Its id stays taken.
      assert.equal(await store.createProject(project()), false);
    });

    it('endpoints: updated field by field, deleted for good', async () => {
      await store.createProject(project());
      const e = {
        projectId: 'proj_a',
        name: 'chat',
        model: 'm',
        streamProfile: null,
        usage: 'always' as const,
        errorStyle: null,
        vendorEvents: null,
        cache: { ttl_s: 60, max_bytes: 4096 },
        createdAt: 1,
      };
      await store.createEndpoint(e);
      assert.equal(await store.updateEndpoint('proj_a', 'chat', { model: 'n', usage: null, errorStyle: 'event' }), true);
      assert.deepEqual(await store.getEndpoint('proj_a', 'chat'), { ...e, model: 'n', usage: null, errorStyle: 'event' });
      const cache = { ttl_s: 0.5, max_bytes: 100 };
      assert.equal(await store.updateEndpoint('proj_a', 'chat', { cache }), true);
      assert.deepEqual((await store.getEndpoint('proj_a', 'chat'))?.cache, cache);
      assert.equal(await store.updateEndpoint('proj_a', 'chat', { cache: null }), true);
      assert.equal((await store.getEndpoint('proj_a', 'chat'))?.cache, null);
      assert.equal(await store.updateEndpoint('proj_a', 'nope', { model: 'n' }), false);
      assert.equal(await store.deleteEndpoint('proj_a', 'chat'), true);
      assert.equal(await store.deleteEndpoint('proj_a', 'chat'), false);
      assert.equal(await store.getEndpoint('proj_a', 'chat'), undefined);
    });

    it('endpoints: unique per project, listed per project', async () => {
      await store.createProject(project());
      await store.createProject(project({ id: 'proj_b' }));
      const e = {
        projectId: 'proj_a',
        name: 'chat',
        model: 'mock/echo',
        streamProfile: 'accounting' as const,
        usage: 'always' as const,
        errorStyle: 'event' as const,
        vendorEvents: 'passthrough' as const,
        cache: { ttl_s: 30, max_bytes: 1_048_576 },
        createdAt: 3,
      };
      assert.equal(await store.createEndpoint(e), true);
      assert.equal(await store.createEndpoint({ ...e, model: 'other/x' }), false);
      assert.equal(
        await store.createEndpoint({
          ...e,
          projectId: 'proj_b',
          streamProfile: null,
          usage: null,
          errorStyle: null,
          vendorEvents: null,
          cache: null,
        }),
        true,
      );
      assert.deepEqual(await store.getEndpoint('proj_a', 'chat'), e);
      assert.equal((await store.getEndpoint('proj_b', 'chat'))?.streamProfile, null);
      assert.equal((await store.getEndpoint('proj_b', 'chat'))?.cache, null);
      assert.equal(await store.getEndpoint('proj_a', 'nope'), undefined);
      assert.deepEqual(
        (await store.listEndpoints('proj_b')).map((x) => x.projectId),
        ['proj_b'],
      );
      assert.equal((await store.listEndpoints()).length, 2);
    });

    it('the ledger keeps each record project and filters by it', async () => {
      const ledger = new LedgerStore(opened.db);
      await ledger.insert([
        ledgerRecord({ requestId: 'r1', projectId: 'proj_a', keyId: '0123456789abcdef' }),
        ledgerRecord({ requestId: 'r2', projectId: 'proj_b', createdAt: 1_760_000_000_500 }),
        ledgerRecord({ requestId: 'r3', projectId: null, createdAt: 1_760_000_000_900 }),
      ]);
      assert.equal((await ledger.get('r1'))?.projectId, 'proj_a');
      assert.equal((await ledger.get('r3'))?.projectId, null);
      assert.deepEqual(
        (await ledger.list({ projectId: 'proj_a' })).data.map((r) => r.requestId),
        ['r1'],
      );
      // On PostgreSQL a row shows in write order once every older transaction on the server has
      // ended, and other tests share the server: wait (bounded) for it.
      let inOrder = await ledger.listInWriteOrder({ projectId: 'proj_b' });
      for (let i = 0; inOrder.data.length === 0 && i < 600; i++) {
        await new Promise((r) => setTimeout(r, 50));
        inOrder = await ledger.listInWriteOrder({ projectId: 'proj_b' });
      }
      assert.deepEqual(
        inOrder.data.map((r) => r.requestId),
        ['r2'],
      );
      assert.equal((await ledger.list({})).data.length, 3);
    });

    it('stored responses are read only by their project (and by whoever reads all)', async () => {
      const responses = new ResponsesStore(opened.db);
      const saved = { createdAt: 1, model: 'mock/echo', conversation: [], response: { id: 'x' } };
      await responses.scoped({ projectId: 'proj_a', readsAll: false }).save({ ...saved, id: 'resp_a' });
      await responses.save({ ...saved, id: 'resp_master' });
      const asA = responses.scoped({ projectId: 'proj_a', readsAll: false });
      const asB = responses.scoped({ projectId: 'proj_b', readsAll: false });
      assert.equal((await asA.get('resp_a'))?.id, 'resp_a');
      assert.equal(await asB.get('resp_a'), undefined);
      assert.equal(await asA.get('resp_master'), undefined);
      assert.equal((await responses.get('resp_a'))?.id, 'resp_a');
      assert.equal((await responses.scoped({ projectId: 'proj_b', readsAll: true }).get('resp_a'))?.id, 'resp_a');
    });
  });
}

governanceStoreContract('node:sqlite', async () => ({ location: { path: ':memory:' }, remove: async () => {} }));

governanceStoreContract(
  'PostgreSQL',
  async () => {
    const schema = await createTestSchema();
    return { location: { databaseUrl: schema.url, path: '' }, remove: schema.drop };
  },
  noPostgres,
);

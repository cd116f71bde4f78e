import assert from 'node:assert/strict';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { createTestSchema, noPostgres, type TestSchema } from '../../test/helpers/postgres.ts';
import { BatchObjectsStore } from './batch-objects-store.ts';
import { openDatabase } from './open-database.ts';
import type { OpenedDatabase, StoreLocation } from './store-location.ts';

const object = (id: string, kind: 'file' | 'batch' | 'message_batch', projectId: string | null, createdAt = 1) => ({
  id,
  kind,
  provider: kind === 'message_batch' ? 'anthropic' : 'openai',
  projectId,
  keyId: projectId && `key-${projectId}`,
  requestId: `req-${id}`,
  createdAt,
  budgets: null,
});

function batchObjectsContract(name: string, location: () => Promise<StoreLocation>, skip: string | false = false) {
  describe(`files and batches, their projects and settlements: ${name}`, { skip }, () => {
    let place: StoreLocation;
    let db: OpenedDatabase;
    let store: BatchObjectsStore;
    beforeEach(async () => {
      place = await location();
      db = await openDatabase(place);
      store = new BatchObjectsStore(db.db);
    });
    afterEach(() => db.close());

    it('an id is found as its kind, with its owner; the first project keeps it', async () => {
      await store.record(object('file-1', 'file', 'team-a'));
      await store.record(object('file-1', 'file', 'team-b'));
      const found = await store.find('file-1', 'file');
      assert.deepEqual(
        [found?.projectId, found?.keyId, found?.provider, found?.requestId, found?.settledAt],
        ['team-a', 'key-team-a', 'openai', 'req-file-1', null],
      );
      assert.equal(await store.find('file-1', 'batch'), undefined, 'a file id is no batch id');
      assert.equal(await store.find('bad\0id', 'file'), undefined);
    });

    it("a project's ids among others', the master key's (no project) apart", async () => {
      await store.record(object('file-a', 'file', 'team-a'));
      await store.record(object('file-b', 'file', 'team-b'));
      await store.record(object('file-m', 'file', null));
      const ids = ['file-a', 'file-b', 'file-m', 'file-unknown'];
      assert.deepEqual([...(await store.owned(ids, 'file', 'team-a'))], ['file-a']);
      assert.deepEqual([...(await store.owned(ids, 'file', null))], ['file-m']);
      const many = Array.from({ length: 600 }, (_, i) => `file-${i}`);
      await Promise.all(many.map((id) => store.record(object(id, 'file', 'team-c'))));
      assert.equal((await store.owned(many, 'file', 'team-c')).size, many.length);
    });

    it('a deleted object is gone: not found, not owned, not waiting to be settled', async () => {
      await store.record(object('batch-d', 'message_batch', 'team-a'));
      await store.markDeleted('batch-d');
      assert.equal(await store.find('batch-d', 'message_batch'), undefined);
      assert.equal((await store.owned(['batch-d'], 'message_batch', 'team-a')).size, 0);
      assert.deepEqual(await store.unsettled(10), []);
    });

    it('the unsettled batches, oldest first, files never among them; a settlement is claimed once', async () => {
      await store.record(object('batch-2', 'batch', 'team-a', 20));
      await store.record(object('msgbatch-1', 'message_batch', 'team-a', 10));
      await store.record(object('file-x', 'file', 'team-a', 5));
      assert.deepEqual(
        (await store.unsettled(10)).map((o) => o.id),
        ['msgbatch-1', 'batch-2'],
      );
      assert.deepEqual(
        (await store.unsettled(1)).map((o) => o.id),
        ['msgbatch-1'],
      );
      // Another instance on the same PostgreSQL (its own pool) races this one: one claim wins.
      // An embedded :memory: store has no other process: the rival shares the connection.
      const other = place.databaseUrl ? await openDatabase(place) : undefined;
      try {
        const rival = new BatchObjectsStore((other ?? db).db);
        const claims = await Promise.all([store.claimSettlement('batch-2', 5), rival.claimSettlement('batch-2', 6)]);
        assert.deepEqual(claims.filter(Boolean).length, 1);
        assert.equal(await rival.claimSettlement('batch-2'), false);
      } finally {
        await other?.close();
      }
      assert.deepEqual(
        (await store.unsettled(10)).map((o) => o.id),
        ['msgbatch-1'],
      );
      assert.ok(((await store.find('batch-2', 'batch'))?.settledAt ?? 0) > 0);
    });
  });
}

batchObjectsContract('node:sqlite', async () => ({ path: ':memory:' }));

const schemas: TestSchema[] = [];
after(async () => {
  for (const s of schemas) await s.drop();
});
batchObjectsContract(
  'PostgreSQL',
  async () => {
    const schema = await createTestSchema();
    schemas.push(schema);
    return { path: ':memory:', databaseUrl: schema.url };
  },
  noPostgres,
);

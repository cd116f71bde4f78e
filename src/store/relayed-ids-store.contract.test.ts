import assert from 'node:assert/strict';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { createTestSchema, noPostgres, type TestSchema } from '../../test/helpers/postgres.ts';
import { migrateStore, openDatabase } from './open-database.ts';
import type { OpenedDatabase, StoreLocation } from './store-location.ts';
import { RelayedIdsStore } from './relayed-ids-store.ts';

function relayedIdsContract(name: string, location: () => Promise<StoreLocation>, skip: string | false = false) {
  describe(`relayed ids, their projects: ${name}`, { skip }, () => {
    let db: OpenedDatabase;
    let store: RelayedIdsStore;
    beforeEach(async () => {
      db = await openDatabase(await location());
      store = new RelayedIdsStore(db.db);
    });
    afterEach(() => db.close());

    it("a project owns the ids it was handed, not another's; the first project keeps an id", async () => {
      await store.record('team-a', ['resp_a', 'msg_a', 'msg_a']);
      await store.record('team-b', ['resp_b', 'resp_a']);
      assert.deepEqual([...(await store.owned('team-a', ['resp_a', 'msg_a', 'resp_b']))].sort(), ['msg_a', 'resp_a']);
      assert.deepEqual([...(await store.owned('team-b', ['resp_a', 'resp_b']))], ['resp_b']);
    });

    it('a lookup right after a record made in this process finds it (it waits for the write)', async () => {
      void store.record('team-a', ['resp_now']);
      assert.deepEqual([...(await store.owned('team-a', ['resp_now']))], ['resp_now']);
    });

    it('an id recorded by another process a moment later is found within the wait', async () => {
      const other = new RelayedIdsStore(db.db);
      setTimeout(() => void other.record('team-a', ['resp_late']), 100);
      assert.deepEqual([...(await store.owned('team-a', ['resp_late']))], ['resp_late']);
    });

    it("an unknown id and another project's take the same bounded wait, then count as not owned", async () => {
      await store.record('team-b', ['resp_theirs']);
      for (const id of ['resp_theirs', 'resp_unknown']) {
        const started = Date.now();
        assert.equal((await store.owned('team-a', [id])).size, 0);
        const waited = Date.now() - started;
        assert.ok(waited >= 450 && waited < 3_000, `${id}: ${waited} ms`);
      }
    });

    it('ids no column can hold are never owned, and a lookup of one is no store error', async () => {
      await store.record('team-a', ['bad\0id', '', 'x'.repeat(300), 'resp_ok']);
      assert.deepEqual([...(await store.owned('team-a', ['bad\0id', '', 'x'.repeat(300), 'resp_ok']))], ['resp_ok']);
    });

    it("an upgraded store knows its stored responses as their projects' (migration 0016)", async () => {
      await migrateStore(db, '0015_ledger_hours');
      const row = (id: string, project: string | null) => ({
        id,
        created_at: 1,
        model: 'up/m',
        conversation: '[]',
        response: '{}',
        project_id: project,
      });
      await db.db
        .insertInto('responses')
        .values([row('resp_old_a', 'team-a'), row('resp_old_master', null)])
        .execute();
      await migrateStore(db);
      assert.deepEqual([...(await store.owned('team-a', ['resp_old_a']))], ['resp_old_a']);
      const rows = await db.db.selectFrom('relayed_ids').selectAll().execute();
      assert.deepEqual(
        rows.map((r) => [r.id, r.project_id, Number(r.created_at)]),
        [['resp_old_a', 'team-a', 1000]],
      );
    });

    it('more ids than one statement binds are recorded and found', async () => {
      const ids = Array.from({ length: 1_200 }, (_, i) => `msg_${i}`);
      await store.record('team-a', ids);
      assert.equal((await store.owned('team-a', ids)).size, ids.length);
    });
  });
}

relayedIdsContract('node:sqlite', async () => ({ path: ':memory:' }));

const schemas: TestSchema[] = [];
after(async () => {
  for (const s of schemas) await s.drop();
});
relayedIdsContract(
  'PostgreSQL',
  async () => {
    const schema = await createTestSchema();
    schemas.push(schema);
    return { path: ':memory:', databaseUrl: schema.url };
  },
  noPostgres,
);

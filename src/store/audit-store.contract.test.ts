import assert from 'node:assert/strict';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { createTestSchema, noPostgres, type TestSchema } from '../../test/helpers/postgres.ts';
import { type AuditEntry, AuditStore } from './audit-store.ts';
import { InvalidLedgerQuery } from './invalid-ledger-query.ts';
import { openDatabase } from './open-database.ts';
import type { OpenedDatabase, StoreLocation } from './store-location.ts';

function entry(n: number, fields: Partial<AuditEntry> = {}): AuditEntry {
  return {
    id: `aud_${String(n).padStart(4, '0')}`,
    createdAt: 1_000_000 + n,
    actor: { kind: 'master', id: 'master', name: null },
    action: 'project.create',
    target: { type: 'project', id: `p${n}` },
    before: null,
    after: { id: `p${n}`, budgets: { daily_usd: 1.5 } },
    requestId: `req_${n}`,
    clientAddress: '127.0.0.1',
    errorCode: null,
    ...fields,
  };
}

function auditContract(name: string, location: () => Promise<StoreLocation>, skip: string | false = false) {
  describe(`the audit log's store: ${name}`, { skip }, () => {
    let db: OpenedDatabase;
    let store: AuditStore;
    beforeEach(async () => {
      db = await openDatabase(await location());
      store = new AuditStore(db.db);
    });
    afterEach(() => db.close());

    it('reads back what it stored, newest first', async () => {
      const key = entry(1, {
        actor: { kind: 'key', id: 'k1', name: 'ops' },
        action: 'key.revoke',
        target: { type: 'key', id: 'k9' },
        before: { status: 'active' },
        after: { status: 'revoked' },
      });
      const failed = entry(2, {
        actor: { kind: 'anonymous', id: null, name: null },
        action: 'console.sign_in_failed',
        target: { type: 'console', id: null },
        after: null,
        clientAddress: null,
        errorCode: 'invalid_api_key',
      });
      await store.append(key);
      await store.append(failed);
      const page = await store.list({});
      assert.deepEqual(page.data, [failed, key]);
      assert.equal(page.nextCursor, null);
    });

    it('filters by actor, action, target and time', async () => {
      await store.append(entry(1));
      await store.append(entry(2, { actor: { kind: 'key', id: 'k1', name: null }, action: 'key.create', target: { type: 'key', id: 'k2' } }));
      await store.append(entry(3, { action: 'key.revoke', target: { type: 'key', id: 'k2' } }));
      const ids = async (q: Parameters<AuditStore['list']>[0]) => (await store.list(q)).data.map((e) => e.id);
      assert.deepEqual(await ids({ actor: 'k1' }), ['aud_0002']);
      assert.deepEqual(await ids({ actor: 'master' }), ['aud_0003', 'aud_0001']);
      assert.deepEqual(await ids({ action: 'key.revoke' }), ['aud_0003']);
      assert.deepEqual(await ids({ targetType: 'key' }), ['aud_0003', 'aud_0002']);
      assert.deepEqual(await ids({ targetType: 'key', targetId: 'k2', action: 'key.create' }), ['aud_0002']);
      assert.deepEqual(await ids({ from: 1_000_002, to: 1_000_003 }), ['aud_0002']);
    });

    it('pages by cursor, every entry once, entries of one millisecond included', async () => {
      for (let n = 0; n < 7; n++) await store.append(entry(n, { createdAt: 5_000 + Math.floor(n / 3) }));
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const page = await store.list({ limit: 3, cursor });
        seen.push(...page.data.map((e) => e.id));
        if (page.nextCursor === null) break;
        cursor = page.nextCursor;
      }
      assert.deepEqual(seen, ['aud_0006', 'aud_0005', 'aud_0004', 'aud_0003', 'aud_0002', 'aud_0001', 'aud_0000']);
    });

    it('refuses a cursor it did not issue', async () => {
      await assert.rejects(store.list({ cursor: 'bm90IGEgY3Vyc29y' }), InvalidLedgerQuery);
    });

    it('prunes the oldest entries before a time, a bounded batch at a time', async () => {
      for (let n = 0; n < 5; n++) await store.append(entry(n));
      assert.equal(await store.prune(1_000_004, 3), 3);
      assert.deepEqual(
        (await store.list({})).data.map((e) => e.id),
        ['aud_0004', 'aud_0003'],
      );
      assert.equal(await store.prune(1_000_004, 3), 1);
      assert.equal(await store.prune(1_000_004, 3), 0);
      assert.deepEqual(
        (await store.list({})).data.map((e) => e.id),
        ['aud_0004'],
      );
    });
  });
}

auditContract('node:sqlite', async () => ({ path: ':memory:' }));

const schemas: TestSchema[] = [];
after(async () => {
  for (const s of schemas) await s.drop();
});
auditContract(
  'PostgreSQL',
  async () => {
    const schema = await createTestSchema();
    schemas.push(schema);
    return { path: ':memory:', databaseUrl: schema.url };
  },
  noPostgres,
);

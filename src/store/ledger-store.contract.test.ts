import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestSchema, noPostgres } from '../../test/helpers/postgres.ts';
import { ledgerRecord } from '../../test/helpers/ledger-records.ts';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { InvalidLedgerQuery } from './invalid-ledger-query.ts';
import { LedgerStore, type LedgerQueryInWriteOrder } from './ledger-store.ts';
import { migrateStore, openDatabase } from './open-database.ts';
import type { OpenedDatabase, StoreLocation } from './store-location.ts';

/** Where one test's store lives, and how to get rid of it afterwards. */
interface StoreSite {
  location: StoreLocation;
  /** False for `:memory:`: a second open is a different, empty database. */
  persistent: boolean;
  remove(): Promise<void>;
}

/**
 * The one contract every ledger driver passes. Each test gets a fresh store from `site()`, so
 * tests never depend on one another's rows.
 */
function ledgerStoreContract(name: string, site: () => Promise<StoreSite>, skip: string | false = false) {
  describe(`ledger store contract: ${name}`, { skip }, () => {
    let where: StoreSite;
    const opened: OpenedDatabase[] = [];
    let store: LedgerStore;

    async function open(): Promise<OpenedDatabase> {
      const db = await openDatabase(where.location);
      opened.push(db);
      return db;
    }

    beforeEach(async () => {
      where = await site();
      store = new LedgerStore((await open()).db);
    });
    afterEach(async () => {
      for (const db of opened.splice(0)) await db.db.destroy();
      await where.remove();
    });

    /** Pages through `list` until the end, asserting each page is within the limit. */
    async function listAll(limit: number, query: Parameters<LedgerStore['list']>[0] = {}): Promise<string[]> {
      const ids: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 1000; pages++) {
        const page = await store.list({ ...query, limit, cursor });
        assert.ok(page.data.length <= limit);
        ids.push(...page.data.map((r) => r.requestId));
        if (!page.nextCursor) return ids;
        cursor = page.nextCursor;
      }
      throw new Error('pagination did not end');
    }

    it('migrates idempotently: migrating again runs nothing, reopening keeps the rows', async () => {
      await store.insert([ledgerRecord({ requestId: 'kept' })]);
      const again = await migrateStore(opened[0]!);
      assert.deepEqual(again.results, []);
      if (where.persistent) {
        const second = new LedgerStore((await open()).db);
        assert.equal((await second.get('kept'))?.requestId, 'kept');
      }
    });

    it('keeps stores at different locations apart (on Postgres: two schemas of one database)', async () => {
      // The first store's migration bookkeeping already exists when the second one migrates.
      await store.insert([ledgerRecord({ requestId: 'in-first' })]);
      const other = await site();
      try {
        const opened2 = await openDatabase(other.location);
        try {
          const second = new LedgerStore(opened2.db);
          await second.insert([ledgerRecord({ requestId: 'in-second' })]);
          assert.equal(await second.get('in-first'), undefined);
          assert.equal(await store.get('in-second'), undefined);
          assert.equal((await second.get('in-second'))?.requestId, 'in-second');
        } finally {
          await opened2.db.destroy();
        }
      } finally {
        await other.remove();
      }
    });

    it('round-trips every field: nulls, booleans, floats, large counts, unicode', async () => {
      const full = ledgerRecord({
        requestId: 'req_full',
        createdAt: 1_767_225_600_123,
        keyId: 'key_7',
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
        requestedModel: 'sonnet-alias',
        surface: 'responses',
        streamed: true,
        inputTokens: 2 ** 40 + 3,
        cachedInputTokens: 2 ** 33,
        cacheWriteTokens: 4_000_000_000,
        outputTokens: Number.MAX_SAFE_INTEGER,
        reasoningTokens: 3_000_000_001,
        usageSource: 'provider',
        costUsd: 1.2345678901234566e-7,
        priceKnown: true,
        ttftMs: 2_147_483_647,
        latencyMs: 86_400_000,
        upstreamStatus: 529,
        outcome: 'error',
        errorType: 'server_error',
        errorCode: 'upstream_overloaded',
        upstreamErrorType: 'overloaded_error',
        upstreamErrorCode: 'ünïcode-code',
        errorMessage: 'Überlastet — 过载 ⚠️ "quoted" \\ back\nslash',
        finishReason: 'length',
        responseCache: 'hit',
        cacheSavedUsd: 0.0123,
        prompt: 'Ünïcödé prompt: 日本語, emoji 👩‍💻, RTL שלום, combining é',
        completion: `${'🦀'.repeat(1000)} end`,
        attempts: [
          {
            provider: 'bedrock',
            model: 'claude-ünï',
            status: null,
            errorCode: 'upstream_connection_error',
            fallbackReason: 'connection_error',
            latencyMs: 3,
          },
          {
            provider: 'anthropic',
            model: 'claude-sonnet-4-5',
            status: 529,
            errorCode: 'upstream_overloaded',
            fallbackReason: null,
            latencyMs: 2_000,
          },
        ],
      });
      const sparse = ledgerRecord({
        requestId: 'req_sparse',
        keyId: null,
        surface: 'chat',
        streamed: false,
        inputTokens: 0,
        outputTokens: 0,
        usageSource: 'estimated',
        costUsd: 0,
        priceKnown: false,
        ttftMs: null,
        latencyMs: 0,
        upstreamStatus: null,
        outcome: 'cancelled',
        errorType: 'cancelled',
        errorCode: 'cancelled',
        errorMessage: 'The client closed the connection.',
        finishReason: null,
        prompt: null,
        completion: null,
      });
      await store.insert([full, sparse]);
      assert.deepEqual(await store.get('req_full'), full);
      assert.deepEqual(await store.get('req_sparse'), sparse);
      assert.equal(await store.get('req_missing'), undefined);
    });

    it('inserts idempotently: the same request_id twice is one row, the first one', async () => {
      const first = ledgerRecord({ requestId: 'dup', outputTokens: 1 });
      await store.insert([first]);
      // A batch retried after an ambiguous failure, and a duplicate inside one batch.
      await store.insert([ledgerRecord({ requestId: 'dup', outputTokens: 2 }), ledgerRecord({ requestId: 'other' })]);
      await store.insert([ledgerRecord({ requestId: 'twice' }), ledgerRecord({ requestId: 'twice', outputTokens: 9 })]);
      assert.deepEqual(await store.get('dup'), first);
      assert.equal((await store.get('twice'))?.outputTokens, 7);
      assert.deepEqual((await listAll(100)).sort(), ['dup', 'other', 'twice']);
    });

    it('says which request ids have a row, in chunks (recording interrupted requests writes only the missing)', async () => {
      await store.insert([ledgerRecord({ requestId: 'here' }), ledgerRecord({ requestId: 'also', outcome: 'interrupted' })]);
      const asked = [...Array.from({ length: 1200 }, (_, i) => `missing-${i}`), 'also', 'here'];
      assert.deepEqual([...(await store.storedIds(asked))].sort(), ['also', 'here']);
      assert.deepEqual(await store.storedIds([]), new Set());
    });

    it('filters by model, provider, outcome and time range (since inclusive, until exclusive)', async () => {
      const t = 1_760_000_000_000;
      const rows: LedgerRecord[] = [
        ledgerRecord({ requestId: 'a', createdAt: t, provider: 'openai', model: 'gpt-4o', outcome: 'ok' }),
        ledgerRecord({ requestId: 'b', createdAt: t + 1000, provider: 'openai', model: 'gpt-4o-mini', outcome: 'error' }),
        ledgerRecord({ requestId: 'c', createdAt: t + 2000, provider: 'groq', model: 'gpt-4o', outcome: 'cancelled' }),
        ledgerRecord({ requestId: 'd', createdAt: t + 3000, provider: 'mock', model: 'echo', outcome: 'ok', keyId: 'k1' }),
        ledgerRecord({ requestId: 'e', createdAt: t + 4000, provider: 'mock', model: 'echo', outcome: 'interrupted' }),
      ];
      await store.insert(rows);
      const ids = async (q: Parameters<LedgerStore['list']>[0]) => (await store.list(q)).data.map((r) => r.requestId);
      assert.deepEqual(await ids({ model: 'gpt-4o' }), ['c', 'a']);
      assert.deepEqual(await ids({ provider: 'openai' }), ['b', 'a']);
      assert.deepEqual(await ids({ outcome: 'ok' }), ['d', 'a']);
      assert.deepEqual(await ids({ outcome: 'cancelled' }), ['c']);
      assert.deepEqual(await ids({ outcome: 'interrupted' }), ['e']);
      assert.deepEqual(await ids({ keyId: 'k1' }), ['d']);
      assert.deepEqual(await ids({ since: t + 1000, until: t + 4000 }), ['d', 'c', 'b']);
      assert.deepEqual(await ids({ until: t + 2000 }), ['b', 'a']);
      assert.deepEqual(await ids({ since: t + 1000, until: t + 3000 }), ['c', 'b']);
      assert.deepEqual(await ids({ model: 'gpt-4o', provider: 'openai', outcome: 'ok', since: t, until: t + 1 }), ['a']);
      assert.deepEqual(await ids({ model: 'nope' }), []);
    });

    it('lists newest first (ties broken by request_id, descending)', async () => {
      const t = 1_760_000_000_000;
      await store.insert([
        ledgerRecord({ requestId: 'm', createdAt: t + 5 }),
        ledgerRecord({ requestId: 'z', createdAt: t }),
        ledgerRecord({ requestId: 'b', createdAt: t + 5 }),
        ledgerRecord({ requestId: 'q', createdAt: t + 9 }),
      ]);
      const page = await store.list({});
      assert.deepEqual(
        page.data.map((r) => r.requestId),
        ['q', 'm', 'b', 'z'],
      );
      assert.equal(page.nextCursor, null);
    });

    it('paginates with a cursor across equal timestamps: no row lost or duplicated', async () => {
      // 37 rows on 4 timestamps: pages of 5 cut through runs of equal created_at.
      const t = 1_760_000_000_000;
      const rows = Array.from({ length: 37 }, (_, i) =>
        ledgerRecord({
          requestId: `r${String(i).padStart(2, '0')}`,
          createdAt: t + (i % 4) * 1000,
          provider: i % 2 ? 'odd' : 'even',
          keyId: i % 3 ? 'k1' : 'k2',
          outcome: i % 5 ? 'ok' : 'error',
          requestedModel: i % 7 ? 'odd/gpt-4o-mini' : 'fast',
        }),
      );
      await store.insert(rows);
      const expected = rows.toSorted((x, y) => y.createdAt - x.createdAt || (x.requestId < y.requestId ? 1 : -1)).map((r) => r.requestId);
      for (const limit of [1, 5, 9, 36, 37, 38]) assert.deepEqual(await listAll(limit), expected, `limit ${limit}`);
      // The cursor composes with a filter.
      const where = (keep: (i: number) => boolean) => expected.filter((id) => keep(Number(id.slice(1))));
      assert.deepEqual(
        await listAll(4, { provider: 'odd' }),
        where((i) => i % 2 === 1),
      );
      assert.deepEqual(
        await listAll(4, { keyId: 'k2' }),
        where((i) => i % 3 === 0),
      );
      assert.deepEqual(
        await listAll(4, { outcome: 'error', provider: 'even' }),
        where((i) => i % 5 === 0 && i % 2 === 0),
      );
      // The model filter's three ways (each read by its own index, merged): alias, provider/model, either.
      assert.deepEqual(
        await listAll(4, { model: 'fast' }),
        where((i) => i % 7 === 0),
      );
      assert.deepEqual(
        await listAll(4, { model: 'odd/gpt-4o-mini' }),
        where((i) => i % 2 === 1 || i % 7 !== 0),
      );
      // The last page says there is no more; an exact fit has no empty trailing page.
      const exact = await store.list({ limit: 37 });
      assert.equal(exact.data.length, 37);
      assert.equal(exact.nextCursor, null);
    });

    it('bounds the limit: default 50, at least 1, at most 1000', async () => {
      const t = 1_760_000_000_000;
      // More than one INSERT chunk (500 rows) in one call, too.
      await store.insert(Array.from({ length: 1003 }, (_, i) => ledgerRecord({ requestId: `x${i}`, createdAt: t + i })));
      assert.equal((await store.list({})).data.length, 50);
      assert.equal((await store.list({ limit: 0 })).data.length, 1);
      assert.equal((await store.list({ limit: -5 })).data.length, 1);
      const max = await store.list({ limit: 5000 });
      assert.equal(max.data.length, 1000);
      assert.notEqual(max.nextCursor, null);
      const rest = await store.list({ limit: 1000, cursor: max.nextCursor ?? undefined });
      assert.deepEqual(
        rest.data.map((r) => r.requestId),
        ['x2', 'x1', 'x0'],
      );
      assert.equal(rest.nextCursor, null);
    });

    /**
     * Rows in write order. On PostgreSQL a row shows once every transaction older than its own
     * has ended, and other tests share the server: wait (bounded) for what was just written.
     */
    async function inWriteOrder(query: LedgerQueryInWriteOrder, expected: number) {
      for (let i = 0; ; i++) {
        const page = await store.listInWriteOrder(query);
        if (page.data.length >= expected || i === 600) return page;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const idsOf = (page: { data: LedgerRecord[] }) => page.data.map((r) => r.requestId);

    it('lists in write order (the order requests ended), whatever their created_at, paginated by after', async () => {
      const t = 1_760_000_000_000;
      // A long stream ends last though it started first; a batch keeps its own order.
      await store.insert([ledgerRecord({ requestId: 'short-1', createdAt: t + 50 }), ledgerRecord({ requestId: 'short-2', createdAt: t + 60 })]);
      await store.insert([ledgerRecord({ requestId: 'long', createdAt: t })]);
      await store.insert([ledgerRecord({ requestId: 'short-3', createdAt: t + 70 })]);
      const all = await inWriteOrder({}, 4);
      assert.deepEqual(idsOf(all), ['short-1', 'short-2', 'long', 'short-3']);
      assert.equal(all.hasMore, false);
      const ids: string[] = [];
      let after: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const page = await store.listInWriteOrder({ after, limit: 3 });
        ids.push(...idsOf(page));
        after = page.nextCursor;
        if (!page.hasMore) break;
      }
      assert.deepEqual(ids, ['short-1', 'short-2', 'long', 'short-3']);
      // Polled again at the end: nothing, and the same place to poll from.
      const empty = await store.listInWriteOrder({ after });
      assert.deepEqual(empty.data, []);
      assert.equal(empty.nextCursor, after);
    });

    it('follows from a listing: every row written after the page exactly once, bursts beyond the limit included', async () => {
      const t = 1_760_000_000_000;
      await store.insert(Array.from({ length: 5 }, (_, i) => ledgerRecord({ requestId: `old${i}`, createdAt: t + i })));
      await inWriteOrder({}, 5);
      const newest = await store.list({ limit: 2 });
      assert.deepEqual(idsOf(newest), ['old4', 'old3']);
      // A burst of 25 rows (several batches) between two polls of limit 10, one of them older than all.
      const burst = Array.from({ length: 25 }, (_, i) =>
        ledgerRecord({ requestId: `new${String(i).padStart(2, '0')}`, createdAt: i === 7 ? t - 1 : t + 100 + i }),
      );
      for (let i = 0; i < burst.length; i += 6) await store.insert(burst.slice(i, i + 6));
      await inWriteOrder({ after: newest.followCursor }, 25);
      const seen: string[] = [];
      let after = newest.followCursor;
      for (let polls = 0; polls < 10; polls++) {
        const page = await store.listInWriteOrder({ after, limit: 10 });
        seen.push(...idsOf(page));
        after = page.nextCursor;
        if (!page.hasMore) break;
      }
      assert.deepEqual(
        seen,
        burst.map((r) => r.requestId),
      );
    });

    it('filters in write order like the listing does', async () => {
      await store.insert([
        ledgerRecord({ requestId: 'a', provider: 'mock', model: 'echo', requestedModel: 'mock/echo', outcome: 'ok' }),
        ledgerRecord({ requestId: 'b', provider: 'mock', model: 'error', requestedModel: 'mock/error', outcome: 'error' }),
        ledgerRecord({ requestId: 'c', provider: 'mock', model: 'echo', requestedModel: 'fast', outcome: 'ok' }),
      ]);
      await inWriteOrder({}, 3);
      assert.deepEqual(idsOf(await store.listInWriteOrder({ model: 'mock/echo' })), ['a', 'c']);
      assert.deepEqual(idsOf(await store.listInWriteOrder({ outcome: 'error' })), ['b']);
    });

    it('matches the model filter against the name the client used (alias, provider/model) or the provider-side model', async () => {
      await store.insert([
        ledgerRecord({ requestId: 'direct', provider: 'mock', model: 'echo', requestedModel: 'mock/echo' }),
        ledgerRecord({ requestId: 'alias', provider: 'mock', model: 'echo', requestedModel: 'fast' }),
        ledgerRecord({
          requestId: 'hf',
          provider: 'huggingface',
          model: 'meta-llama/Llama-3.1-8B',
          requestedModel: 'huggingface/meta-llama/Llama-3.1-8B',
        }),
        ledgerRecord({ requestId: 'other', provider: 'openai', model: 'echo', requestedModel: 'openai/echo' }),
      ]);
      const ids = async (model: string) => idsOf(await store.list({ model })).sort();
      assert.deepEqual(await ids('mock/echo'), ['alias', 'direct']);
      assert.deepEqual(await ids('fast'), ['alias']);
      assert.deepEqual(await ids('echo'), ['alias', 'direct', 'other']);
      assert.deepEqual(await ids('meta-llama/Llama-3.1-8B'), ['hf']);
      assert.deepEqual(await ids('huggingface/meta-llama/Llama-3.1-8B'), ['hf']);
      assert.deepEqual(await ids('openai/gpt-4o'), []);
    });

    it('refuses a cursor it did not issue, naming the parameter, instead of starting over', async () => {
      await store.insert([ledgerRecord({ requestId: 'x1', createdAt: 1 }), ledgerRecord({ requestId: 'x2', createdAt: 2 })]);
      const page = await store.list({ limit: 1 });
      assert.ok(page.nextCursor);
      const refused = (param: string) => (err: unknown) => err instanceof InvalidLedgerQuery && err.param === param;
      for (const cursor of [
        'nonsense',
        '',
        'MTIzOmFiYw!!',
        Buffer.from('1.5:x').toString('base64url'),
        Buffer.from('99999999999999999:x').toString('base64url'),
        `${page.nextCursor}x`,
      ]) {
        await assert.rejects(store.list({ cursor }), refused('cursor'), JSON.stringify(cursor));
      }
      const follow = (await store.listInWriteOrder({})).nextCursor;
      for (const after of [
        'nonsense',
        '',
        page.nextCursor,
        Buffer.from('w:1.2.3').toString('base64url'),
        Buffer.from('w:-1').toString('base64url'),
        `${follow}=`,
      ]) {
        await assert.rejects(store.listInWriteOrder({ after }), refused('after'), JSON.stringify(after));
      }
    });
  });
}

ledgerStoreContract('node:sqlite (file)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-ledger-'));
  return {
    // A nested path: the store creates its folder.
    location: { path: join(dir, 'nested', 'sluice.db') },
    persistent: true,
    remove: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

ledgerStoreContract('node:sqlite (:memory:)', async () => ({
  location: { path: ':memory:' },
  persistent: false,
  remove: async () => {},
}));

ledgerStoreContract(
  'PostgreSQL (DATABASE_URL)',
  async () => {
    const schema = await createTestSchema();
    return { location: { databaseUrl: schema.url, path: ':memory:' }, persistent: true, remove: schema.drop };
  },
  noPostgres,
);

/**
 * The request log's queries read the indexes made for them, on both engines: every filter the
 * console and GET /v1/requests offer, alone, with a time range and past a cursor, newest first
 * and in write order. Plans, never timings (bench/ledger-page.ts times them on 1M rows).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { createTestSchema, noPostgres, type TestSchema } from '../../test/helpers/postgres.ts';
import { keyName, projectName, recordOf, rowColumns } from '../../test/helpers/ledger-rows.ts';
import type { Database } from './database.ts';
import { type LedgerQuery, LedgerStore } from './ledger-store.ts';
import { SqliteThreadDialect } from './sqlite-thread-dialect.ts';
import { openDatabase } from './open-database.ts';
import type { StoreLocation } from './store-location.ts';

const END = Date.UTC(2026, 10, 24);
const DAY = 86_400_000;
const RANGE = { since: END - 10 * DAY, until: END - 3 * DAY };

/** A store whose every query is recorded, to be explained afterwards. */
interface Explaining {
  store: LedgerStore;
  /** The plans of the ledger queries `run` issued, one text each. */
  plans(run: (store: LedgerStore) => Promise<unknown>): Promise<string[]>;
  close(): Promise<void>;
}

async function explaining(engine: 'sqlite' | 'postgres', location: StoreLocation, rows: number): Promise<Explaining> {
  // Migrated and seeded through the gateway's own opening path, then read through a Kysely that logs.
  const seeded = await openDatabase(location);
  const columns = rowColumns(rows, END);
  const seeder = new LedgerStore(seeded.db);
  for (let i = 0; i < rows; i += 1000) {
    await seeder.insert(Array.from({ length: Math.min(1000, rows - i) }, (_, j) => recordOf(columns, i + j)));
  }
  if (engine === 'postgres') await seeded.db.executeQuery(CompiledQuery.raw('analyze ledger'));
  await seeded.close();
  const issued: CompiledQuery[] = [];
  const log = (event: { level: string; query: CompiledQuery }) => {
    if (event.level === 'query') issued.push(event.query);
  };
  const db =
    engine === 'sqlite'
      ? new Kysely<Database>({ dialect: new SqliteThreadDialect(location.path), log })
      : new Kysely<Database>({
          dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: location.databaseUrl, max: 1 }) }),
          log,
        });
  const store = new LedgerStore(db);
  return {
    store,
    async plans(run) {
      issued.length = 0;
      await run(store);
      const queries = issued.splice(0).filter((q) => /\bfrom "ledger"/.test(q.sql) && !/max\(rowid\)/.test(q.sql));
      const texts: string[] = [];
      for (const q of queries) {
        const explain = engine === 'sqlite' ? 'explain query plan ' : 'explain (costs off) ';
        const { rows: lines } = await db.executeQuery<Record<string, string>>(CompiledQuery.raw(explain + q.sql, [...q.parameters]));
        texts.push(lines.map((line) => (engine === 'sqlite' ? line.detail : line['QUERY PLAN'])).join('\n'));
      }
      return texts;
    },
    close: () => db.destroy(),
  };
}

/** The console's and GET /v1/requests' filters, each with the index it must read. */
const FILTERS: { name: string; query: LedgerQuery; indexes: RegExp }[] = [
  { name: 'key', query: { keyId: keyName(100) }, indexes: /ledger_key/ },
  { name: 'outcome', query: { outcome: 'error' }, indexes: /ledger_outcome/ },
  { name: 'project', query: { projectId: projectName(7) }, indexes: /ledger_project/ },
  { name: 'provider', query: { provider: 'groq' }, indexes: /ledger_provider/ },
  { name: 'model (provider/model)', query: { model: 'groq/llama-3.1-8b' }, indexes: /ledger_requested_model/ },
  { name: 'model (alias)', query: { model: 'coder' }, indexes: /ledger_requested_model/ },
  { name: 'a key and a model', query: { keyId: keyName(0), model: 'openai/gpt-4o-mini' }, indexes: /ledger_key/ },
];

async function cursorOf(store: LedgerStore, query: LedgerQuery): Promise<string> {
  const page = await store.list({ ...query, until: END - 15 * DAY, limit: 1 });
  assert.ok(page.nextCursor, 'the seeded rows reach past the first page');
  return page.nextCursor;
}

describe('request log query plans: SQLite (no statistics: the same plans at any size; 12,000 rows: past the write-order window)', () => {
  let dir: string;
  let db: Explaining;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-plans-'));
    db = await explaining('sqlite', { path: join(dir, 'ledger.db') }, 12_000);
  });
  after(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** An index search, never a scan of the table nor of the created_at index with a filter. */
  function assertIndexed(plans: string[], index: RegExp) {
    const text = plans.join('\n');
    assert.match(text, index, text);
    assert.doesNotMatch(text, /SCAN ledger\b/, text);
    assert.doesNotMatch(text, /USING INDEX ledger_created_at/, text);
  }

  /** Ledger rows read in the index's order: no sort of every match (at most of the request_id tie-break within one created_at). */
  function assertOrderedByIndex(plans: string[]) {
    const text = plans.join('\n');
    assert.doesNotMatch(text, /MULTI-INDEX OR/, text);
    assert.doesNotMatch(text, /(SEARCH|SCAN) ledger .*\n(USE TEMP B-TREE FOR LAST TERM OF ORDER BY\n)?USE TEMP B-TREE FOR ORDER BY/, text);
  }

  it('reads the first page, and a page past a cursor, by the created_at index', async () => {
    const cursor = await cursorOf(db.store, {});
    for (const query of [{}, { cursor }]) {
      const text = (await db.plans((s) => s.list(query))).join('\n');
      assert.match(text, /(SCAN|SEARCH) ledger USING INDEX ledger_created_at/, text);
      assert.doesNotMatch(text, /TEMP B-TREE/, text);
    }
    const ranged = (await db.plans((s) => s.list(RANGE))).join('\n');
    assert.match(ranged, /SEARCH ledger USING INDEX ledger_created_at \(created_at>\? AND created_at<\?\)/, ranged);
  });

  for (const { name, query, indexes } of FILTERS) {
    it(`lists newest first by ${name} through its index: alone, with a time range, past a cursor`, async () => {
      const cursor = await cursorOf(db.store, query);
      for (const q of [query, { ...query, ...RANGE }, { ...query, cursor }]) {
        const plans = await db.plans((s) => s.list(q));
        assertIndexed(plans, indexes);
        assertOrderedByIndex(plans);
      }
    });
  }

  it('matches a model by its three indexes, each read in order (a union of three short lists)', async () => {
    const text = (await db.plans((s) => s.list({ model: 'openai/gpt-4o-mini' }))).join('\n');
    for (const index of ['ledger_requested_model', 'ledger_model', 'ledger_provider|ledger_model']) {
      assert.match(text, new RegExp(`SEARCH ledger USING INDEX (${index})`), text);
    }
    assert.match(text, /MERGE \(UNION\)/, text);
  });

  it("lists a key's rows of a model by the key's model indexes (migration 0030), each in order", async () => {
    const text = (await db.plans((s) => s.list({ keyId: keyName(0), model: 'openai/gpt-4o-mini' }))).join('\n');
    for (const index of ['ledger_key_requested_model', 'ledger_key_model']) {
      assert.match(text, new RegExp(`SEARCH ledger USING INDEX ${index} \\(key_id=\\? AND`), text);
    }
    assertOrderedByIndex([text]);
  });

  for (const { name, query, indexes } of FILTERS) {
    it(`follows the write order by ${name}: a window of rowids first, then (page not full) its index`, async () => {
      // A page larger than the window holds of each (rarer than 10%) filter: both queries run; the
      // second sorts what the filter's index finds (a rare value's rows: few) by rowid.
      for (const q of [query, { ...query, ...RANGE }]) {
        const [window, rest, ...more] = await db.plans((s) => s.listInWriteOrder({ ...q, limit: 1000 }));
        assert.equal(more.length, 0);
        assert.match(window, /SEARCH ledger USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/, window);
        assert.doesNotMatch(window, /USING INDEX|TEMP B-TREE/, window);
        assertIndexed([rest], indexes);
      }
    });
  }

  it('finds a request by its X-Request-ID through the primary key', async () => {
    const text = (await db.plans((s) => s.get('0000000000000000000000'))).join('\n');
    assert.match(text, /SEARCH ledger USING INDEX sqlite_autoindex_ledger_1 \(request_id=\?\)/, text);
  });
});

/**
 * A plan without its scans of the months after the rows' last (END): the partitions created
 * ahead of time (ledger-partitions.ts) hold no row, and reading an empty table whole costs
 * nothing, which its planner knows.
 */
function withoutEmptyPartitions(plan: string): string {
  const last = new Date(END).toISOString().slice(0, 7).replace('-', '_');
  return plan
    .split('\n')
    .filter((line) => {
      const month = /Seq Scan on ledger_p(\d{4}_\d{2})/.exec(line)?.[1];
      return month === undefined || month <= last;
    })
    .join('\n');
}

describe('request log query plans: PostgreSQL (statistics of 20,000 analyzed rows)', { skip: noPostgres }, () => {
  let schema: TestSchema;
  let db: Explaining;
  before(async () => {
    schema = await createTestSchema();
    db = await explaining('postgres', { databaseUrl: schema.url, path: ':memory:' }, 20_000);
  });
  after(async () => {
    await db?.close();
    await schema?.drop();
  });

  it('never scans the ledger: every page, filter and order reads an index', async () => {
    for (const { query } of FILTERS) {
      const cursor = await cursorOf(db.store, query);
      const plans: string[] = [];
      for (const q of [query, { ...query, ...RANGE }, { ...query, cursor }]) plans.push(...(await db.plans((s) => s.list(q))));
      for (const q of [query, { ...query, ...RANGE }]) plans.push(...(await db.plans((s) => s.listInWriteOrder(q))));
      for (const plan of plans) assert.doesNotMatch(withoutEmptyPartitions(plan), /Seq Scan/, plan);
    }
  });

  it("lists a key's rows of a model by the key's model indexes (migration 0030)", async () => {
    const text = (await db.plans((s) => s.list({ keyId: keyName(0), model: 'openai/gpt-4o-mini' }))).join('\n');
    assert.match(text, /key_id_requested_model_created_at|ledger_key_requested_model/, text);
    assert.match(text, /Index Cond: \(\(key_id = .*\) AND \(requested_model = /, text);
  });

  it('reads a rare key and the rare errors by their own indexes, not the created_at index with a filter', async () => {
    for (const [query, index] of [
      [{ keyId: keyName(100) }, /Index Cond: \(key_id = /],
      [{ outcome: 'error' as const }, /Index Cond: \(outcome = /],
    ] as const) {
      const text = (await db.plans((s) => s.list(query))).join('\n');
      assert.match(text, index, text);
    }
  });

  it('bounds a page past a cursor in the index (a row comparison), never walks down to it', async () => {
    for (const query of [{}, { keyId: keyName(3) }]) {
      const cursor = await cursorOf(db.store, query);
      const text = (await db.plans((s) => s.list({ ...query, cursor }))).join('\n');
      assert.match(text, /Index Cond: .*ROW\(created_at, request_id\) < ROW\(/, text);
    }
  });

  it('finds a request by its X-Request-ID through the primary key', async () => {
    const text = (await db.plans((s) => s.get('0000000000000000000000'))).join('\n');
    // Each month's partition has its own primary key (ledger_p2026_11_pkey, ...).
    assert.match(text, /Index (Only )?Scan using ledger_(p\d{4}_\d{2}_)?pkey/, text);
    assert.doesNotMatch(withoutEmptyPartitions(text), /Seq Scan/, text);
  });
});

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { createTestSchema, noPostgres } from '../../test/helpers/postgres.ts';
import { ledgerRecord } from '../../test/helpers/ledger-records.ts';
import type { Database } from './database.ts';
import { partitionsOf } from './ledger-partitions.ts';
import { LedgerStore } from './ledger-store.ts';
import { upkeepLedger } from './ledger-upkeep.ts';
import { migrateStore } from './open-database.ts';
import { openPostgres } from './open-postgres.ts';
import { sqliteHere } from './sqlite-here.ts';
import type { OpenedDatabase } from './store-location.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ROWS = 6_000;
/** Rows an hour apart up to now: 250 days, nine months or so. */
const base = Date.now() - ROWS * HOUR;
/** A clock once far off: older than any partition the migration makes, so into the default partition. */
const LONG_AGO = Date.UTC(1990, 0, 1);

/** Content was stored these last hours (a partition a day of it on PostgreSQL). */
const CONTENT_HOURS = 30 * 24;

/** The ledger as migration 0016 left it, filled: every tenth row of the last 30 days with content, three from 1990. */
async function fillOldLedger(db: Kysely<Database>): Promise<void> {
  await sql`
    with recursive g(n) as (select 1 union all select n + 1 from g where n < ${ROWS})
    insert into ledger (request_id, created_at, key_id, project_id, provider, model, requested_model, surface, streamed,
      input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, reasoning_tokens, usage_source, cost_usd,
      price_known, latency_ms, outcome, prompt, completion)
    select 'old-' || n, cast(${base} as bigint) + n * cast(${HOUR} as bigint), 'key-' || (n % 7), 'proj-' || (n % 3), 'openai', 'gpt-4o-mini', 'gpt-4o-mini',
      'chat', 1, n, 0, 0, 2 * n, 0, 'provider', n * 0.001, 1, 100 + n, 'ok',
      case when n % 10 = 0 and n > ${ROWS - CONTENT_HOURS} then 'prompt ' || n end,
      case when n % 10 = 0 and n > ${ROWS - CONTENT_HOURS} then 'completion ' || n end
    from g`.execute(db);
  await sql`
    insert into ledger (request_id, created_at, provider, model, requested_model, surface, streamed, input_tokens,
      cached_input_tokens, cache_write_tokens, output_tokens, reasoning_tokens, usage_source, cost_usd, price_known, latency_ms, outcome)
    values ('stray-1', cast(${LONG_AGO} as bigint), 'openai', 'm', 'm', 'chat', 1, 1, 0, 0, 1, 0, 'provider', 1, 1, 1, 'ok'),
      ('stray-2', cast(${LONG_AGO + 1} as bigint), 'openai', 'm', 'm', 'chat', 1, 1, 0, 0, 1, 0, 'provider', 1, 1, 1, 'ok'),
      ('stray-3', cast(${LONG_AGO + 2} as bigint), 'openai', 'm', 'm', 'chat', 1, 1, 0, 0, 1, 0, 'provider', 1, 1, 1, 'ok')`.execute(db);
}

interface Totals {
  rows: number;
  ids: number;
  input: number;
  cost: number;
}

async function totals(db: Kysely<Database>): Promise<Totals> {
  const { rows } = await sql<Record<keyof Totals, number | string>>`
    select count(*) as rows, count(distinct request_id) as ids, sum(input_tokens) as input, sum(cost_usd) as cost from ledger`.execute(db);
  const r = rows[0];
  return { rows: Number(r.rows), ids: Number(r.ids), input: Number(r.input), cost: Math.round(Number(r.cost) * 1000) };
}

async function contentTotals(db: Kysely<Database>, table: 'ledger' | 'ledger_content') {
  const { rows } = await sql<{ n: number | string; chars: number | string }>`
    select count(*) as n, sum(length(prompt) + length(completion)) as chars from ${sql.table(table)}
    where prompt is not null or completion is not null`.execute(db);
  return { n: Number(rows[0].n), chars: Number(rows[0].chars) };
}

function migrationContract(name: string, site: () => Promise<{ opened: OpenedDatabase; remove: () => Promise<void> }>, skip: string | false) {
  describe(`migration 0021 on a populated ledger: ${name}`, { skip }, () => {
    it('moves every row and its content once, and the store goes on from there', async () => {
      const { opened, remove } = await site();
      try {
        const { db } = opened;
        await migrateStore(opened, '0020_audit_log');
        await fillOldLedger(db);
        const before = await totals(db);
        const contentBefore = await contentTotals(db, 'ledger');
        assert.equal(contentBefore.n, CONTENT_HOURS / 10);

        const result = await migrateStore(opened);
        // 0021 and every migration after it, each a success.
        assert.equal(result.results?.[0]?.migrationName, '0021_ledger_partitions_content');
        assert.deepEqual(
          result.results?.filter((r) => r.status !== 'Success'),
          [],
        );
        assert.deepEqual(await totals(db), before);
        assert.equal(before.rows, ROWS + 3);
        // 0024 refilled the untagged spend rollups from the ledger (per provider key): the same sums.
        for (const table of ['spend_hours', 'spend_days']) {
          const { rows } = await sql<{ n: number | string; input: number | string }>`
            select sum(requests) as n, sum(input_tokens) as input from ${sql.table(table)}`.execute(db);
          assert.deepEqual([Number(rows[0].n), Number(rows[0].input)], [before.rows, before.input], table);
        }
        assert.deepEqual(await contentTotals(db, 'ledger_content'), contentBefore);

        if (opened.engine === 'postgres') {
          const months = await partitionsOf(db, 'ledger');
          assert.ok(months.length >= 9, `a partition for every month from the first row's on (${months.length})`);
          const { rows } = await sql<{ n: number }>`select count(*)::int as n from ledger_default`.execute(db);
          assert.equal(rows[0].n, 3, 'the rows older than the partitions are in the default partition');
        }

        // Read with its content, written to, and followed in write order as before.
        const store = new LedgerStore(db);
        const old = await store.get(`old-${ROWS}`);
        assert.equal(old?.prompt, `prompt ${ROWS}`);
        assert.equal(old?.completion, `completion ${ROWS}`);
        assert.equal((await store.get(`old-${ROWS - 1}`))?.prompt, null);
        const follow = (await store.list({ limit: 1 })).followCursor;
        const fresh = ledgerRecord({ requestId: 'new-1', createdAt: Date.now(), prompt: 'hi', completion: 'there' });
        await store.insert([fresh, fresh]);
        // On PostgreSQL a row shows in write order once every older transaction on the server has
        // ended, and other tests' migrations share the server: wait (bounded) for it.
        let followed = await store.listInWriteOrder({ after: follow });
        for (let i = 0; followed.data.length === 0 && i < 600; i++) {
          await new Promise((r) => setTimeout(r, 50));
          followed = await store.listInWriteOrder({ after: follow });
        }
        assert.deepEqual(
          followed.data.map((r) => [r.requestId, r.prompt]),
          [['new-1', 'hi']],
        );
        assert.equal((await totals(db)).rows, before.rows + 1);
      } finally {
        await opened.close();
        await remove();
      }
    });

    it('applies the retention: rows, content and strays past it go, the rest stays', async () => {
      const { opened, remove } = await site();
      try {
        const { db } = opened;
        await migrateStore(opened, '0020_audit_log');
        await fillOldLedger(db);
        await migrateStore(opened);
        const now = Date.now();
        // Repeated as the instances do: a run does a bounded amount on SQLite, and is idempotent.
        for (let run = 0; run < 3; run++) await upkeepLedger(db, { rowsDays: 60, contentDays: 10, rollupDays: {} }, now);
        const { rows } = await sql<{ first: number | string; n: number | string }>`
          select min(created_at) as first, count(*) as n from ledger`.execute(db);
        const first = Number(rows[0].first);
        // PostgreSQL keeps the rows to the month (the partition of their month goes once it is wholly past), SQLite to the row.
        assert.ok(first >= now - 60 * DAY - (opened.engine === 'postgres' ? 31 * DAY : 0), 'nothing older than the retention');
        assert.ok(first < now - 59 * DAY, 'the rows within the retention stay');
        const content = await sql<{ first: number | string | null }>`select min(created_at) as first from ledger_content`.execute(db);
        assert.ok(Number(content.rows[0].first) >= now - 10 * DAY - DAY, 'no content older than its retention (to the day)');
        assert.ok(Number(content.rows[0].first) < now - 9 * DAY, 'the content within its retention stays');
        const strays = await sql<{ n: number | string }>`select count(*) as n from ledger where created_at < ${base}`.execute(db);
        assert.equal(Number(strays.rows[0].n), 0);
        if (opened.engine === 'postgres') {
          const report = await upkeepLedger(db, { rowsDays: 60, contentDays: 10, rollupDays: {} }, now);
          assert.deepEqual(report.dropped, [], 'nothing left to drop');
          assert.ok((await partitionsOf(db, 'ledger')).at(-1)!.from > now, 'partitions made ahead');
        }
      } finally {
        await opened.close();
        await remove();
      }
    });
  });
}

migrationContract(
  'SQLite',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-0021-'));
    const db = sqliteHere(join(dir, 'sluice.db'));
    return {
      opened: { db, engine: 'sqlite', close: () => db.destroy() },
      remove: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
  false,
);

migrationContract(
  'PostgreSQL',
  async () => {
    const schema = await createTestSchema();
    return { opened: openPostgres({ databaseUrl: schema.url, path: ':memory:' }, 'migrations'), remove: schema.drop };
  },
  noPostgres,
);

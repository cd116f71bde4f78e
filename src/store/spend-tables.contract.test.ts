import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createTestSchema, noPostgres, type TestSchema } from '../../test/helpers/postgres.ts';
import { ledgerRecord } from '../../test/helpers/ledger-records.ts';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { upkeepLedger } from './ledger-upkeep.ts';
import { LedgerStore } from './ledger-store.ts';
import { migrateStore, openDatabase } from './open-database.ts';
import { periodStart, type ReportPeriod, readReport, type SpendGroupBy } from './spend-report.ts';
import { addSpend, noSpend, type SpendCell } from './spend-cells.ts';
import { SPEND_PROJECT_DAYS, SPEND_ROLLUPS, SPEND_SUMS } from './spend-tables.ts';
import type { OpenedDatabase, StoreLocation } from './store-location.ts';

const HOUR = 3_600_000;
/** 2026-01-30T20:00Z: the rows run across hours, days and the January/February/March month ends. */
const T0 = Date.UTC(2026, 0, 30, 20);
const SPAN = 31 * 24 * HOUR;
const PROJECTS = ['alpha', 'beta', 'gamma', null];
const TAGS = ['team:search', 'team:chat', 'env=prod', 'batch', 'exp/a'];

/** A seeded generator: the same rows on every run and engine. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return s / 2_147_483_648;
  };
}

function generated(count: number): LedgerRecord[] {
  const next = random(42);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)];
  return Array.from({ length: count }, (_, i) => {
    const projectId = pick(PROJECTS);
    const tags = TAGS.filter(() => next() < 0.3);
    return ledgerRecord({
      requestId: `gen-${i}`,
      createdAt: T0 + Math.floor(next() * SPAN),
      projectId,
      keyId: projectId === null ? null : `${projectId}-k${Math.floor(next() * 3)}`,
      provider: pick(['openai', 'anthropic']),
      model: pick(['small', 'large', 'mid']),
      inputTokens: Math.floor(next() * 5000),
      cachedInputTokens: Math.floor(next() * 1000),
      providerKey: pick(['team-a', 'team-b', null]),
      outputTokens: Math.floor(next() * 2000),
      // Sub-cent costs with many digits: the sums must still agree to the cent.
      costUsd: Math.round(next() * 0.2 * 1e9) / 1e9,
      outcome: next() < 0.1 ? 'error' : 'ok',
      tags: tags.length > 0 ? tags : null,
    });
  });
}

const RECORDS = generated(3000);
const cents = (usd: number) => Math.round(usd * 100);

interface Row {
  created_at: number;
  project_id: string | null;
  key_id: string | null;
  provider: string;
  model: string;
  tags: string | null;
  provider_key: string | null;
  cost_usd: number;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
}

/** The ledger's own sums per group and period, from its rows as stored (each tag of a row counts it). */
function ledgerSums(rows: readonly Row[], groupBy: readonly SpendGroupBy[], period: ReportPeriod) {
  const sums = new Map<string, { requests: number; cost: number; input: number; cached: number; output: number }>();
  for (const r of rows) {
    const tags: (string | null)[] = groupBy.includes('tag') ? (r.tags ? (JSON.parse(r.tags) as string[]) : [null]) : [null];
    for (const tag of tags) {
      const key: Record<string, string | null> = {};
      for (const g of groupBy) {
        if (g === 'project') key.project = r.project_id ?? '';
        if (g === 'key') key.key = r.key_id ?? '';
        if (g === 'model') key.model = `${r.provider}/${r.model}`;
        if (g === 'tag') key.tag = tag ?? '';
        if (g === 'provider_key') key.provider_key = r.provider_key ? `${r.provider}/${r.provider_key}` : '';
      }
      const id = `${periodStart(period, Number(r.created_at))} ${JSON.stringify(key)}`;
      const s = sums.get(id) ?? { requests: 0, cost: 0, input: 0, cached: 0, output: 0 };
      s.requests++;
      s.cost += Number(r.cost_usd);
      s.input += Number(r.input_tokens);
      s.cached += Number(r.cached_input_tokens);
      s.output += Number(r.output_tokens);
      sums.set(id, s);
    }
  }
  return sums;
}

function spendContract(name: string, location: () => Promise<StoreLocation>, skip: string | false = false) {
  describe(`the spend report equals the ledger's own sums: ${name}`, { skip }, () => {
    let db: OpenedDatabase;
    let ledger: LedgerStore;
    let rows: Row[];
    before(async () => {
      db = await openDatabase(await location());
      ledger = new LedgerStore(db.db);
      // In batches of a writer's size, out of time order, as requests end.
      for (let i = 0; i < RECORDS.length; i += 250) await ledger.insert(RECORDS.slice(i, i + 250));
      rows = (
        await sql<Row>`select created_at, project_id, key_id, provider, model, tags, provider_key, cost_usd, input_tokens, cached_input_tokens, output_tokens from ledger`.execute(
          db.db,
        )
      ).rows;
    });
    after(() => db.close());

    const read = (period: 'hours' | 'days', byTag: boolean, filter: Parameters<LedgerStore['spend']>[2], keep: readonly SpendGroupBy[]) =>
      ledger.spend(period, byTag, filter, keep);
    const whole = { from: periodStart('month', T0), to: Date.UTC(2026, 3, 1) };

    for (const period of ['hour', 'day', 'month'] as const) {
      for (const groupBy of [
        [],
        ['project'],
        ['project', 'key', 'model'],
        ['tag'],
        ['project', 'tag'],
        ['provider_key'],
        ['model', 'provider_key'],
      ] as SpendGroupBy[][]) {
        it(`by ${period}, grouped by ${groupBy.join(',') || 'nothing'}`, async () => {
          const filter = period === 'hour' ? { from: T0, to: T0 + SPAN + HOUR } : whole;
          const report = await readReport(read, { groupBy, period, filter });
          const [total] = (await sql<{ n: number; cost: number }>`select count(*) as n, sum(cost_usd) as cost from ledger`.execute(db.db)).rows;
          assert.equal(report.totals.requests, Number(total.n));
          assert.equal(cents(report.totals.costUsd), cents(Number(total.cost)));
          const expected = ledgerSums(rows, groupBy, period);
          const actual = new Map<string, { requests: number; cost: number; input: number; cached: number; output: number }>();
          const entries =
            groupBy.length === 0
              ? report.series.filter((p) => p.sums.requests > 0).map((p) => ({ key: {}, p }))
              : report.groups.flatMap((g) => g.series.map((p) => ({ key: g.key, p })));
          for (const { key, p } of entries) {
            actual.set(`${p.start} ${JSON.stringify(key)}`, {
              requests: p.sums.requests,
              cost: p.sums.costUsd,
              input: p.sums.inputTokens,
              cached: p.sums.cachedInputTokens,
              output: p.sums.outputTokens,
            });
          }
          assert.deepEqual([...actual.keys()].sort(), [...expected.keys()].sort());
          for (const [id, e] of expected) {
            const a = actual.get(id)!;
            assert.deepEqual({ ...a, cost: cents(a.cost) }, { ...e, cost: cents(e.cost) }, id);
          }
        });
      }
    }

    it('a project filter and a tag filter narrow the totals to what the ledger holds of them', async () => {
      const report = await readReport(read, { groupBy: ['key'], period: 'day', filter: { ...whole, projectId: 'beta', tag: 'batch' } });
      const mine = rows.filter((r) => r.project_id === 'beta' && r.tags !== null && (JSON.parse(r.tags) as string[]).includes('batch'));
      assert.equal(report.totals.requests, mine.length);
      assert.equal(cents(report.totals.costUsd), cents(mine.reduce((a, r) => a + Number(r.cost_usd), 0)));
      assert.ok(report.groups.every((g) => g.key.key?.startsWith('beta-')));
    });

    it('a batch stored again adds nothing', async () => {
      await ledger.insert(RECORDS.slice(0, 500));
      const report = await readReport(read, { groupBy: [], period: 'month', filter: whole });
      assert.equal(report.totals.requests, RECORDS.length);
      const { byProject, summed } = await bothGrains();
      assert.deepEqual(byProject, summed);
    });

    /** spend_project_days' rows, and spend_days' summed over keys and provider keys by the store, as numbers in key order. */
    async function bothGrains() {
      const keys = 'period_start, project_id, provider, model';
      const rows = async (text: string) =>
        (await sql.raw<Record<string, number | string>>(text).execute(db.db)).rows.map((row) =>
          Object.fromEntries(
            Object.entries(row).map(([k, v]) => [k, k === 'cost_usd' ? cents(Number(v)) : typeof v === 'string' && !/^\d+$/.test(v) ? v : Number(v)]),
          ),
        );
      return {
        byProject: await rows(`select ${keys}, ${SPEND_SUMS.join(', ')} from ${SPEND_PROJECT_DAYS.table} order by ${keys}`),
        summed: await rows(
          `select ${keys}, ${SPEND_SUMS.map((c) => `sum(${c}) as ${c}`).join(', ')} from ${SPEND_ROLLUPS.days.table} group by ${keys} order by ${keys}`,
        ),
      };
    }

    it("writes each batch's days summed over keys and provider keys beside them: the same sums", async () => {
      const { byProject, summed } = await bothGrains();
      assert.ok(byProject.length > 0);
      assert.deepEqual(byProject, summed);
    });

    it('reads the same cells from the days by project as from the days by key, for every read that needs no key', async () => {
      // What the days by key give, summed over the key here: the path every read took before spend_project_days.
      const overKeys = (cells: readonly SpendCell[]) => {
        const sums = new Map<string, SpendCell>();
        for (const c of cells) {
          const id = [c.start, c.projectId, c.provider, c.model].join(' ');
          const into = sums.get(id) ?? { ...c, keyId: '', ...noSpend() };
          addSpend(into, c);
          sums.set(id, into);
        }
        return normal([...sums.values()]);
      };
      const normal = (cells: readonly SpendCell[]) =>
        cells
          .map((c) => ({ ...c, costUsd: Math.round(c.costUsd * 1e9) }))
          .sort((a, b) => a.start - b.start || `${a.projectId} ${a.provider} ${a.model}`.localeCompare(`${b.projectId} ${b.provider} ${b.model}`));
      const next = random(7);
      const filters = [
        whole,
        { from: Date.UTC(2026, 1, 3), to: Date.UTC(2026, 1, 17) },
        { ...whole, projectId: 'beta' },
        { ...whole, projectIds: ['alpha', 'gamma'] },
        { ...whole, model: 'openai/large' },
        { ...whole, model: 'small' },
      ];
      for (const filter of filters) {
        for (const keep of [[], ['project'], ['model'], ['project', 'model']] as SpendGroupBy[][]) {
          // A random period of the filter's range, so the cuts fall anywhere.
          const from = filter.from + Math.floor(next() * 10) * 86_400_000;
          const f = { ...filter, from };
          const read = await ledger.spend('days', false, f, keep);
          const viaKeys = await ledger.spend('days', false, f, [...keep, 'key']);
          assert.ok(read.every((c) => c.keyId === '' && c.providerKey === ''));
          assert.deepEqual(normal(read), overKeys(viaKeys), `${JSON.stringify(f)} ${keep.join(',')}`);
        }
      }
    });

    it('fills the days by project from the days by key when migrating a store that has them (0031)', async () => {
      await migrateStore(db, '0030_ledger_key_model');
      const up = await migrateStore(db);
      assert.ok(up.results?.some((r) => r.migrationName === '0031_spend_project_days'));
      const { byProject, summed } = await bothGrains();
      assert.ok(byProject.length > 0);
      assert.deepEqual(byProject, summed);
    });

    it('drops the days by project with the other days past ledger.retention (last: it empties them)', async () => {
      const before = (await bothGrains()).byProject.length;
      assert.ok(before > 0);
      // T0 is in January 2026: a day past its retention a year and a half later.
      const report = await upkeepLedger(db.db, { rollupDays: { day: 30 } }, Date.UTC(2027, 6, 1));
      assert.ok(report.deleted >= before);
      assert.deepEqual(await bothGrains(), { byProject: [], summed: [] });
    });
  });
}

const schemas: TestSchema[] = [];
const dirs: string[] = [];
after(async () => {
  for (const s of schemas) await s.drop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
spendContract('node:sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-spend-'));
  dirs.push(dir);
  return { path: join(dir, 'ledger.db') };
});
spendContract(
  'PostgreSQL',
  async () => {
    const schema = await createTestSchema();
    schemas.push(schema);
    return { path: ':memory:', databaseUrl: schema.url };
  },
  noPostgres,
);

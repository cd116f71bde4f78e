import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createTestSchema, noPostgres, type TestSchema } from '../../test/helpers/postgres.ts';
import { ledgerRecord } from '../../test/helpers/ledger-records.ts';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { LedgerStore } from './ledger-store.ts';
import { LedgerWriter } from './ledger-writer.ts';
import { migrateStore, openDatabase } from './open-database.ts';
import type { OpenedDatabase, StoreLocation } from './store-location.ts';
import { acrossProjects, type RollupCell, summarize } from './rollup-cells.ts';
import { upkeepLedger } from './ledger-upkeep.ts';
import {
  addRollups,
  HISTOGRAM_SUMMED,
  MINUTE_HISTOGRAMS,
  MINUTES_ACROSS_PROJECTS,
  MINUTES_KEPT_MS,
  ROLLUPS,
  type RollupPeriod,
  readCharts,
  readRollups,
  SUMMED,
} from './rollup-tables.ts';

const MINUTE = 60_000;
const HOUR = 3_600_000;
/** Recent enough that its minutes are kept (not pruned): the rollups' figures are read back whole. */
const T0 = Math.floor((Date.now() - 2 * HOUR) / HOUR) * HOUR;

/** Costs are multiples of 1/64: their float sums are exact in any order, so the test compares them exactly. */
const rec = (requestId: string, fields: Partial<LedgerRecord> = {}): LedgerRecord =>
  ledgerRecord({ requestId, createdAt: T0 + 5 * MINUTE, provider: 'mock', model: 'echo', costUsd: 0.25, ...fields });

/** A mix of minutes, hours, models, outcomes, and TTFT/latency on and either side of bucket bounds. */
const MIX: LedgerRecord[] = [
  rec('m-1'),
  rec('m-2', { ttftMs: 10, latencyMs: 11, outcome: 'error', costUsd: 0 }),
  rec('m-3', { ttftMs: null, latencyMs: 120_000, createdAt: T0 + 5 * MINUTE + 59_999, outcome: 'interrupted' }),
  rec('m-4', { ttftMs: 120_001, latencyMs: 2_000_000, createdAt: T0 + 6 * MINUTE, costUsd: 0.125 }),
  rec('m-5', { model: 'slow', ttftMs: 0, latencyMs: 25, createdAt: T0 + HOUR + 1 }),
  rec('m-6', { provider: 'other-co', model: 'echo', inputTokens: 1_000, outputTokens: 3, createdAt: T0 + HOUR + 30 * MINUTE }),
  rec('m-pa', { projectId: 'proj_a', createdAt: T0 + 5 * MINUTE + 1 }),
  rec('m-pb', { projectId: 'proj_b', ttftMs: 30, createdAt: T0 + 5 * MINUTE + 2 }),
];

/** A seeded generator: the same rows on every run and engine. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return s / 2_147_483_648;
  };
}

/** Records over 90 minutes, four projects (and none), three providers by four models, every bucket's range. */
function randomRecords(count: number, seed: number): LedgerRecord[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)];
  return Array.from({ length: count }, (_, i) =>
    rec(`rand-${seed}-${i}`, {
      createdAt: T0 + Math.floor(next() * 90 * MINUTE),
      projectId: pick(['proj_a', 'proj_b', 'proj_c', 'proj_d', null]),
      provider: pick(['mock', 'alpha', 'beta']),
      model: pick(['echo', 'slow', 'big', 'tiny']),
      inputTokens: Math.floor(next() * 5_000),
      outputTokens: Math.floor(next() * 2_000),
      costUsd: Math.floor(next() * 64) / 64,
      outcome: pick(['ok', 'ok', 'ok', 'error', 'interrupted', 'cancelled']),
      ttftMs: next() < 0.2 ? null : Math.floor(next() * 150_000),
      latencyMs: Math.floor(next() * 200_000),
    }),
  );
}

function rollupContract(name: string, location: () => Promise<StoreLocation>, { skip = false as string | false, oneWriterPerProcess = false } = {}) {
  describe(`ledger rollups, written with the rows they count: ${name}`, { skip }, () => {
    let where: StoreLocation;
    let db: OpenedDatabase;
    let ledger: LedgerStore;
    beforeEach(async () => {
      where = await location();
      db = await openDatabase(where);
      ledger = new LedgerStore(db.db);
    });
    afterEach(() => db.close());

    /** What each table holds, in summarize's order. */
    const read = async (period: RollupPeriod) => sorted(await readRollups(db.db, period, 0));
    /** What each table should hold for exactly these stored records. */
    const expected = (records: readonly LedgerRecord[], period: RollupPeriod) => summarize(records, ROLLUPS[period].periodMs);
    async function assertCounts(records: readonly LedgerRecord[]) {
      assert.deepEqual(await read('minutes'), expected(records, 'minutes'));
      assert.deepEqual(await read('hours'), expected(records, 'hours'));
    }

    it('counts a stored batch per minute and per hour; a retried batch or a row already stored adds nothing', async () => {
      await ledger.insert(MIX);
      await assertCounts(MIX);
      // The batch again (its commit not heard of), with a new row: only the new row counts.
      const late = rec('m-7', { createdAt: T0 + 7 * MINUTE });
      await ledger.insert([...MIX, late]);
      // A journal replayed at start writes rows the store may already hold.
      await ledger.insert([MIX[0], late]);
      await assertCounts([...MIX, late]);
    });

    it("reads every project's rows, or the given projects' only", async () => {
      await ledger.insert(MIX);
      const of = (projects: string[]) => MIX.filter((r) => projects.includes(r.projectId ?? ''));
      for (const period of ['minutes', 'hours'] as const) {
        assert.deepEqual(sorted(await readRollups(db.db, period, 0, ['proj_a'])), expected(of(['proj_a']), period));
        assert.deepEqual(sorted(await readRollups(db.db, period, 0, ['proj_b', 'proj_a'])), expected(of(['proj_a', 'proj_b']), period));
        assert.deepEqual(await readRollups(db.db, period, 0, []), []);
        assert.deepEqual(await readRollups(db.db, period, 0, ['proj_none']), []);
      }
    });

    it("reads the charts' sums: series per period and provider/model, histograms per period, projects summed", async () => {
      await ledger.insert(MIX);
      for (const period of ['minutes', 'hours'] as const) {
        for (const projects of [undefined, ['proj_a', 'proj_b'], []]) {
          const cells = summarize(
            MIX.filter((r) => !projects || projects.includes(r.projectId ?? '')),
            ROLLUPS[period].periodMs,
          );
          const series = new Map<string, { requests: number; errors: number; tokens: number; costUsd: number }>();
          const histograms = new Map<number, { ttft: number[]; latency: number[] }>();
          for (const c of cells) {
            const key = `${c.start} ${c.provider} ${c.model}`;
            const s = series.get(key) ?? { requests: 0, errors: 0, tokens: 0, costUsd: 0 };
            series.set(key, {
              requests: s.requests + c.requests,
              errors: s.errors + c.errors,
              tokens: s.tokens + c.inputTokens + c.outputTokens,
              costUsd: s.costUsd + c.costUsd,
            });
            const h = histograms.get(c.start) ?? { ttft: c.ttft.map(() => 0), latency: c.latency.map(() => 0) };
            histograms.set(c.start, { ttft: h.ttft.map((n, i) => n + c.ttft[i]), latency: h.latency.map((n, i) => n + c.latency[i]) });
          }
          const read = await readCharts(db.db, period, 0, projects);
          const bySeries = (a: { start: number; provider: string; model: string }, b: typeof a) =>
            a.start - b.start || a.provider.localeCompare(b.provider) || a.model.localeCompare(b.model);
          assert.deepEqual(
            read.series.sort(bySeries),
            [...series]
              .map(([key, sums]) => {
                const [start, provider, model] = key.split(' ');
                return { start: Number(start), provider, model, ...sums };
              })
              .sort(bySeries),
          );
          assert.deepEqual(
            read.histograms.sort((a, b) => a.start - b.start),
            [...histograms].map(([start, h]) => ({ start, ...h })).sort((a, b) => a.start - b.start),
          );
        }
      }
    });

    /**
     * The tables across projects' rows, and ledger_minutes' summed over their projects (and over
     * their models for the histograms) by the store, as numbers in key order.
     */
    async function bothGrains() {
      const rows = async (text: string) =>
        (await sql.raw<Record<string, number | string>>(text).execute(db.db)).rows.map((row) =>
          Object.fromEntries(Object.entries(row).map(([k, v]) => [k, k === 'provider' || k === 'model' ? v : Number(v)])),
        );
      const grains = async (table: string, keys: string, columns: readonly string[]) => ({
        across: await rows(`select ${keys}, ${columns.join(', ')} from ${table} order by ${keys}`),
        summed: await rows(
          `select ${keys}, ${columns.map((c) => `sum(${c}) as ${c}`).join(', ')} from ${ROLLUPS.minutes.table} group by ${keys} order by ${keys}`,
        ),
      });
      const series = await grains(
        MINUTES_ACROSS_PROJECTS.table,
        'minute, provider, model',
        SUMMED.filter((c) => !HISTOGRAM_SUMMED.includes(c)),
      );
      const histograms = await grains(MINUTE_HISTOGRAMS.table, 'minute', HISTOGRAM_SUMMED);
      return { ...series, histograms: histograms.across, summedHistograms: histograms.summed };
    }

    it('writes the per-project minutes summed over projects beside them: the same sums, batch by batch, on random rows', async () => {
      const records = randomRecords(1_200, 7);
      for (let i = 0; i < records.length; i += 150) await ledger.insert(records.slice(i, i + 150));
      // A retried batch (its commit not heard of) adds to neither.
      await ledger.insert(records.slice(300, 450));
      const { across, summed, histograms, summedHistograms } = await bothGrains();
      assert.ok(across.length > 0);
      assert.deepEqual(across, summed);
      assert.equal(histograms.length, new Set(records.map((r) => Math.floor(r.createdAt / MINUTE))).size);
      assert.deepEqual(histograms, summedHistograms);
      assert.equal(
        across.reduce((a, r) => a + Number(r.requests), 0),
        records.length,
      );
      assert.equal(
        histograms.reduce((a, r) => a + HISTOGRAM_SUMMED.filter((c) => c.startsWith('latency_')).reduce((b, c) => b + Number(r[c]), 0), 0),
        records.length,
      );
      // The charts of every project (the table across projects) and of every project named (the per-project table) agree.
      const everyProject = ['proj_a', 'proj_b', 'proj_c', 'proj_d', ''];
      const bySeries = (a: { start: number; provider: string; model: string }, b: typeof a) =>
        a.start - b.start || a.provider.localeCompare(b.provider) || a.model.localeCompare(b.model);
      const all = await readCharts(db.db, 'minutes', 0);
      const named = await readCharts(db.db, 'minutes', 0, everyProject);
      assert.deepEqual(all.series.sort(bySeries), named.series.sort(bySeries));
      assert.deepEqual(
        all.histograms.sort((a, b) => a.start - b.start),
        named.histograms.sort((a, b) => a.start - b.start),
      );
      assert.equal(all.histograms.length, new Set(summarize(records, MINUTE).map((c) => c.start)).size);
      assert.deepEqual(
        all.series.map((c) => c.requests),
        acrossProjects(summarize(records, MINUTE)).map((c) => c.requests),
      );
    });

    it('counts a request id once, from the record stored, when a batch holds it twice', async () => {
      const first = rec('dup', { costUsd: 0.5 });
      const second = rec('dup', { costUsd: 2, model: 'slow' });
      await ledger.insert([first, rec('x-1'), second]);
      assert.equal((await ledger.get('dup'))?.costUsd, 0.5);
      await assertCounts([first, rec('x-1')]);
    });

    it('counts nothing of a batch whose transaction failed, and the batch once when written later', async () => {
      const batch = Array.from({ length: 150 }, (_, i) => rec(`f-${i}`, { createdAt: T0 + (i % 7) * MINUTE }));
      // The second insert statement (rows 100-149) fails: a row's created_at may not be null.
      const broken = [...batch];
      broken[130] = { ...batch[130], createdAt: null as unknown as number };
      await assert.rejects(ledger.insert(broken));
      assert.deepEqual(await read('minutes'), []);
      assert.deepEqual(await read('hours'), []);
      await ledger.insert(batch);
      await assertCounts(batch);
    });

    it('counts a batch once when the writer retries it after a failure it could not tell from a lost commit', async () => {
      let failNext = true;
      const writer = new LedgerWriter(
        {
          async insert(records) {
            await ledger.insert(records);
            // Committed, then the connection dropped before the answer came.
            if (failNext) {
              failNext = false;
              throw new Error('Connection terminated unexpectedly');
            }
          },
        },
        { flushIntervalMs: 1, batchSize: 100, maxBuffered: 1_000, maxBackoffMs: 1 },
      );
      for (const r of MIX) writer.write(r);
      await writer.flush();
      assert.equal(writer.stats.failures, 1);
      await assertCounts(MIX);
    });

    const twoWriters = oneWriterPerProcess
      ? 'node:sqlite waits for a lock synchronously, so two writers in one process block each other: test/e2e/workers.test.ts runs two processes'
      : false;
    it('sums every writer of one store into the same rows: two processes writing at once, in any order', { skip: twoWriters }, async () => {
      const other = await openDatabase(where);
      try {
        const second = new LedgerStore(other.db);
        const pairs = ['a', 'b', 'c', 'd'].flatMap((provider) => ['x', 'y'].map((model) => ({ provider, model })));
        // Each batch touches every pair of two minutes; the second writer's records come in reverse.
        const batches = (writer: string) =>
          Array.from({ length: 10 }, (_, b) =>
            pairs.flatMap((p, i) => [0, 1].map((m) => rec(`${writer}-${b}-${i}-${m}`, { ...p, createdAt: T0 + m * MINUTE }))),
          );
        const one = batches('one');
        const two = batches('two');
        await Promise.all([
          (async () => {
            for (const batch of one) await ledger.insert(batch);
          })(),
          (async () => {
            for (const batch of two) await second.insert(batch.toReversed());
          })(),
        ]);
        await assertCounts([...one.flat(), ...two.flat()]);
      } finally {
        await other.close();
      }
    });

    it("keeps per-minute rows as long as ledger.retention says (the upkeep's range delete), and per-hour rows", async () => {
      const now = Date.now();
      const old = Math.floor((now - MINUTES_KEPT_MS - 3 * HOUR) / HOUR) * HOUR;
      const oldRecords = [0, 30, 90, 150].map((m) => rec(`old-${m}`, { createdAt: old + m * MINUTE }));
      // Written back when they were recent...
      await db.db.transaction().execute((trx) => addRollups(trx, oldRecords, old + 3 * HOUR));
      assert.equal((await read('minutes')).length, 4);
      // ...kept while their retention lasts, deleted by the upkeep after it.
      assert.equal((await bothGrains()).across.length, 4);
      assert.equal((await bothGrains()).histograms.length, 4);
      assert.equal((await upkeepLedger(db.db, { rollupDays: { minute: 3 } }, now)).deleted, 0);
      // Four rows of each table: per project, across projects, and their histograms.
      assert.equal((await upkeepLedger(db.db, { rollupDays: { minute: 2 } }, now)).deleted, 12);
      assert.deepEqual(await read('minutes'), []);
      assert.deepEqual((await bothGrains()).across, []);
      assert.deepEqual((await bothGrains()).histograms, []);
      assert.deepEqual(await read('hours'), expected(oldRecords, 'hours'));
      // A record that old arriving now (a journal replayed after a long stop) counts in its hour only.
      const replayed = rec('old-replayed', { createdAt: old + 10 * MINUTE });
      await ledger.insert([replayed, MIX[0]]);
      assert.deepEqual(await read('minutes'), expected([MIX[0]], 'minutes'));
      assert.deepEqual(await read('hours'), expected([...oldRecords, replayed, MIX[0]], 'hours'));
      const { across, summed, histograms, summedHistograms } = await bothGrains();
      assert.deepEqual(across, summed);
      assert.deepEqual(histograms, summedHistograms);
    });

    it('fills the minutes across projects from the per-project ones when migrating a store that has them (0032)', async () => {
      await ledger.insert(randomRecords(400, 11));
      await migrateStore(db, '0031_spend_project_days');
      // Per-minute rows the ledger's batches did not write as they are: the fill sums what the table holds.
      await sql`update ledger_minutes set requests = requests * 3, cost_usd = cost_usd * 3, latency_0 = latency_0 + 1`.execute(db.db);
      const up = await migrateStore(db);
      assert.ok(up.results?.some((r) => r.migrationName === '0032_ledger_minutes_all'));
      const { across, summed, histograms, summedHistograms } = await bothGrains();
      assert.ok(across.length > 0);
      assert.deepEqual(across, summed);
      assert.ok(histograms.length > 0);
      assert.deepEqual(histograms, summedHistograms);
      assert.equal(
        across.reduce((a, r) => a + Number(r.requests), 0),
        3 * 400,
      );
    });

    it('fills the rollups from the ledger when migrating a store that has rows (an upgrade)', async () => {
      // No project: 0015 fills ledger_hours without one, and 0023 keeps the first hour's row (not a whole hour of the ledger's).
      const twoDaysAgo = rec('m-old', { createdAt: Date.now() - MINUTES_KEPT_MS - HOUR, latencyMs: 250, ttftMs: 251 });
      const rows = [...MIX, twoDaysAgo];
      await ledger.insert(rows);
      const written = { minutes: await read('minutes'), hours: await read('hours') };
      // Back to before the hourly rollups, with per-minute rows that counted a retried batch twice.
      await migrateStore(db, '0013_console_sessions');
      await sql`update ledger_minutes set requests = requests * 2, cost_usd = cost_usd * 2`.execute(db.db);
      const up = await migrateStore(db);
      assert.ok(up.results?.some((r) => r.migrationName === '0015_ledger_hours'));
      // The migration's SQL (CASE per bucket) gives what the writer's sums gave, bucket for bucket.
      assert.deepEqual(await read('minutes'), written.minutes);
      assert.deepEqual(await read('hours'), written.hours);
      assert.deepEqual(written.minutes, expected(MIX, 'minutes'));
      assert.deepEqual(written.hours, expected(rows, 'hours'));
    });

    it("adds the project to the rollups (0023): the ledger's periods by project, older ones kept as of no project", async () => {
      const old = Math.floor((Date.now() - 400 * 24 * HOUR) / HOUR) * HOUR;
      const pruned = [rec('gone-1', { projectId: 'proj_a', createdAt: old + MINUTE }), rec('gone-2', { createdAt: old + 2 * MINUTE })];
      // The oldest row left starts its hour: the ledger holds that hour whole, and 0023 sums it by project.
      const onTheHour = rec('on-the-hour', { createdAt: T0 - HOUR });
      await ledger.insert([...pruned, onTheHour, ...MIX]);
      await migrateStore(db, '0022_ledger_mcp_bytes');
      // The old rows' ledger rows deleted (ledger.retention), their hour's row kept.
      await sql`delete from ledger where request_id like 'gone-%'`.execute(db.db);
      const up = await migrateStore(db);
      assert.ok(up.results?.some((r) => r.migrationName === '0023_rollups_by_project'));
      const asNoProject = pruned.map((r) => ({ ...r, projectId: null }));
      assert.deepEqual(await read('hours'), expected([...asNoProject, onTheHour, ...MIX], 'hours'));
      assert.deepEqual(await read('minutes'), expected([onTheHour, ...MIX], 'minutes'));
      assert.deepEqual(
        await readRollups(db.db, 'hours', old, ['proj_a']),
        expected(
          MIX.filter((r) => r.projectId === 'proj_a'),
          'hours',
        ),
      );
    });
  });
}

function sorted(cells: RollupCell[]): RollupCell[] {
  const key = (c: RollupCell) => `${String(c.start).padStart(16, '0')}\0${c.projectId}\0${c.provider}\0${c.model}`;
  return cells.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

const schemas: TestSchema[] = [];
const dirs: string[] = [];
after(async () => {
  for (const s of schemas) await s.drop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
// A file, not :memory:: two connections must open the same store.
rollupContract(
  'node:sqlite',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-rollups-'));
    dirs.push(dir);
    return { path: join(dir, 'ledger.db') };
  },
  { oneWriterPerProcess: true },
);
rollupContract(
  'PostgreSQL',
  async () => {
    const schema = await createTestSchema();
    schemas.push(schema);
    return { path: ':memory:', databaseUrl: schema.url };
  },
  { skip: noPostgres },
);

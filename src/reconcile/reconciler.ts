import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Config, ReconcileProviderConfig } from '../config/schema.ts';
import { errors } from '../errors/catalog.ts';
import type { Database } from '../store/database.ts';
import {
  listReconciliations,
  pruneReconciliations,
  readLedgerDays,
  readUpstreamIds,
  releaseLock,
  saveReconciliation,
  type StoredReconciliation,
  takeLock,
} from '../store/reconcile-store.ts';
import type { ReconcileGauge } from '../telemetry/metrics.ts';
import { fetchAnthropicReport } from './anthropic-report.ts';
import { type Comparison, compareRows } from './compare.ts';
import { ReportError } from './fetch-report.ts';
import { fetchOpenAiReport } from './openai-report.ts';
import { fetchOpenRouterReport } from './openrouter-report.ts';
import { dayOf, daysOf, type LedgerRow, type ReportRow } from './rows.ts';

type ReconcileConfig = Config['reconcile'];

const DAY_MS = 86_400_000;
/** A run that dies holds its lock no longer than this; a run of thousands of OpenRouter lookups fits. */
const LOCK_MS = 30 * 60_000;
/** How often the schedule looks whether a run is due (or the interval, when shorter). */
const TICK_MS = 15 * 60_000;
/** The longest range one run compares. */
export const MAX_RANGE_DAYS = 92;

const DEFAULT_ORIGINS = {
  openai: 'https://api.openai.com',
  anthropic: 'https://api.anthropic.com',
  openrouter: 'https://openrouter.ai',
} as const;

/** What a stored run's `result` holds. */
export interface RunResult {
  report: ReconcileProviderConfig['report'];
  threshold: ReconcileConfig['threshold'];
  comparison: Comparison;
  notes: string[];
}

/**
 * Reconciles one provider's ledger rows against its report over a range of UTC days, stores the
 * outcome, and keeps each provider's latest for the gauges. One run per provider at a time across
 * every instance sharing the store (a lock row), whether asked for or scheduled.
 */
export class Reconciler {
  private db: Kysely<Database> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly latest = new Map<string, StoredReconciliation>();

  private readonly config: () => ReconcileConfig;
  private readonly log: (message: string) => void;

  /** `config`: read at each run, so a reload's thresholds and providers apply to the runs to come. */
  constructor(config: () => ReconcileConfig, log: (message: string) => void) {
    this.config = config;
    this.log = log;
  }

  attachStore(db: Kysely<Database>): void {
    this.db = db;
    void this.refreshLatest();
  }

  /** The store, or a 400 when the ledger is off / a 503 while it is not open (as the request log's reads). */
  private store(): Kysely<Database> {
    if (!this.db) throw errors.storeUnavailable('the store is not open yet (sluice retries it; see its log)');
    return this.db;
  }

  /** The newest runs first (GET /admin/reconciliations). */
  list(q: { provider?: string; limit: number }): Promise<StoredReconciliation[]> {
    return listReconciliations(this.store(), q);
  }

  /** Each provider's latest run, for /metrics. */
  gauges(): ReconcileGauge[] {
    return [...this.latest.values()].map((r) => {
      const result = r.result === null ? undefined : (JSON.parse(r.result) as RunResult);
      const totals = result?.comparison.totals;
      return {
        provider: r.provider,
        at: r.createdAt,
        status: r.status,
        driftUsd: totals?.drift.cost ?? 0,
        driftRatio: totals?.relative.cost ?? 0,
        zeroPriced: result?.comparison.zeroPriced.length ?? 0,
      };
    });
  }

  /**
   * Runs a reconciliation of `provider` over [fromDay, toDay] (UTC, inclusive) and stores it: a
   * failed report read is stored too, then thrown as provider_report_unavailable.
   */
  async run(
    provider: string,
    fromDay: string,
    toDay: string,
    trigger: StoredReconciliation['trigger'],
  ): Promise<StoredReconciliation> {
    const { providers } = this.config();
    // Own keys only: `constructor` or `__proto__` name no report.
    const settings = Object.hasOwn(providers, provider) ? providers[provider] : undefined;
    if (!settings) {
      const known = Object.keys(providers);
      throw errors.invalidRequest(
        `No report is configured for provider ${provider} (reconcile.providers: ${known.length ? known.join(', ') : 'none'}).`,
        'provider',
      );
    }
    if (settings.admin_key === '') {
      throw errors.invalidRequest(
        `reconcile.providers.${provider}.admin_key is empty: set its variable to reconcile ${provider}.`,
        'provider',
      );
    }
    const db = this.store();
    const lock = `reconcile:${provider}`;
    // A holder per run: two runs of one process exclude each other as two instances' do.
    const holder = randomUUID();
    const now = Date.now();
    if (!(await takeLock(db, lock, holder, now, now + LOCK_MS))) throw errors.reconciliationRunning(provider);
    try {
      return await this.runLocked(db, provider, settings, fromDay, toDay, trigger);
    } finally {
      await releaseLock(db, lock, holder).catch((err: unknown) =>
        this.log(`reconcile: could not release ${lock}: ${String(err)}`),
      );
    }
  }

  private async runLocked(
    db: Kysely<Database>,
    provider: string,
    settings: ReconcileProviderConfig,
    fromDay: string,
    toDay: string,
    trigger: StoredReconciliation['trigger'],
  ): Promise<StoredReconciliation> {
    const config = this.config();
    const from = Date.parse(`${fromDay}T00:00:00Z`);
    const to = Date.parse(`${toDay}T00:00:00Z`) + DAY_MS;
    const base: Omit<StoredReconciliation, 'status' | 'error' | 'result'> = {
      id: `rec_${randomUUID().replaceAll('-', '')}`,
      provider,
      fromDay,
      toDay,
      createdAt: Date.now(),
      trigger,
    };
    let stored: StoredReconciliation;
    let failure: Error | undefined;
    try {
      const ledgerRows: LedgerRow[] = (await readLedgerDays(db, provider, from, to)).map(({ dayStart, ...sums }) => ({
        day: dayOf(dayStart),
        ...sums,
      }));
      const report = await this.fetchReport(db, provider, settings, from, to);
      const comparison = compareRows(ledgerRows, report.rows, daysOf(fromDay, toDay), {
        relative: config.threshold.relative,
        absoluteUsd: config.threshold.absolute_usd,
      });
      const result: RunResult = { report: settings.report, threshold: config.threshold, comparison, notes: report.notes };
      stored = { ...base, status: comparison.over ? 'over' : 'ok', error: null, result: JSON.stringify(result) };
    } catch (err) {
      if (!(err instanceof ReportError)) throw err;
      failure = err;
      stored = { ...base, status: 'failed', error: err.message, result: null };
    }
    await saveReconciliation(db, stored);
    this.latest.set(provider, stored);
    await pruneReconciliations(db, Date.now() - config.keep_days * DAY_MS).catch((err: unknown) =>
      this.log(`reconcile: could not delete old results: ${String(err)}`),
    );
    if (failure) throw errors.providerReportUnavailable(failure.message);
    return stored;
  }

  private async fetchReport(
    db: Kysely<Database>,
    provider: string,
    s: ReconcileProviderConfig,
    from: number,
    to: number,
  ): Promise<{ rows: ReportRow[]; notes: string[] }> {
    const baseUrl = s.base_url ?? DEFAULT_ORIGINS[s.report];
    if (s.report === 'openai') {
      const rows = await fetchOpenAiReport(
        { baseUrl, adminKey: s.admin_key, apiKeyIds: s.api_key_ids, projectIds: s.project_ids },
        from,
        to,
      );
      return { rows, notes: [] };
    }
    if (s.report === 'anthropic') {
      return {
        rows: await fetchAnthropicReport({ baseUrl, adminKey: s.admin_key, apiKeyIds: s.api_key_ids }, from, to),
        notes: [],
      };
    }
    const generations = await readUpstreamIds(db, provider, from, to, s.max_generations);
    const report = await fetchOpenRouterReport({ baseUrl, adminKey: s.admin_key }, generations);
    if (generations.length === s.max_generations) {
      report.notes.push(`only the first ${s.max_generations} generations of the range were looked up (max_generations)`);
    }
    return report;
  }

  /**
   * The schedule (reconcile.schedule.interval_h): every tick, each provider whose latest
   * scheduled run is older than the interval is run over the last `days` whole days, by
   * whichever instance takes its lock first; the others only read the new latest.
   */
  start(): void {
    const tick = () => {
      void this.tick().catch((err: unknown) => this.log(`reconcile: the scheduled run failed: ${(err as Error).message}`));
    };
    const interval = this.config().schedule.interval_h;
    if (interval === undefined) return;
    this.timer = setInterval(tick, Math.min(interval * 3_600_000, TICK_MS));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async tick(): Promise<void> {
    if (!this.db) return;
    const { schedule, providers } = this.config();
    if (schedule.interval_h === undefined) return;
    await this.refreshLatest();
    const today = Date.parse(`${dayOf(Date.now())}T00:00:00Z`);
    const fromDay = dayOf(today - schedule.days * DAY_MS);
    const toDay = dayOf(today - DAY_MS);
    for (const [provider, settings] of Object.entries(providers)) {
      if (settings.admin_key === '') continue;
      const [last] = await listReconciliations(this.db, { provider, trigger: 'schedule', limit: 1 });
      if (last && last.createdAt > Date.now() - schedule.interval_h * 3_600_000) continue;
      try {
        const run = await this.run(provider, fromDay, toDay, 'schedule');
        if (run.status === 'over') this.log(`reconcile: ${provider} ${fromDay}..${toDay} is past the threshold (${run.id})`);
      } catch (err) {
        // Another instance's run, or a report that failed (stored, and counted by its gauge).
        if ((err as { code?: string }).code !== 'reconciliation_running') {
          this.log(`reconcile: ${provider} ${fromDay}..${toDay}: ${(err as Error).message}`);
        }
      }
    }
  }

  /** Each provider's latest run from the store: another instance's runs reach this one's gauges. */
  private async refreshLatest(): Promise<void> {
    if (!this.db) return;
    try {
      for (const provider of Object.keys(this.config().providers)) {
        const [last] = await listReconciliations(this.db, { provider, limit: 1 });
        if (last) this.latest.set(provider, last);
      }
    } catch (err) {
      this.log(`reconcile: could not read the latest results: ${(err as Error).message}`);
    }
  }
}

import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { RedisDownReason } from '../store/redis-link.ts';
import type { LedgerWriterStats } from '../store/ledger-writer.ts';
import type { LedgerExportStats } from './ledger-export.ts';
import { BoundedLabels } from './bounded-labels.ts';
import { type CounterSeries, type HistogramSeries, SeriesCounter, SeriesHistogram } from './series-metrics.ts';

export interface MetricsSources {
  /** Streams being answered now (the open request scopes of streamed requests). */
  openStreams: () => number;
  /** The ledger writer's counters; undefined while the ledger is off or not open yet. */
  ledger: () => LedgerWriterStats | undefined;
  /** The ledger export's counters (ledger-export.ts); undefined while it is off. */
  ledgerExport?: () => LedgerExportStats | undefined;
  /** The MCP gateway's upstream servers by name, with their state (up, connecting, down). */
  mcpServers?: () => Record<string, { state: string }>;
  /** Each provider's latest reconciliation against its report (src/reconcile). */
  reconciliations?: () => readonly ReconcileGauge[];
  /** The exact response cache's counters since start (src/cache). */
  responseCache?: () => { hits: number; misses: number; bytes: number; evictions: number };
  /** Every key of every provider's key pool (providers.<name>.api_keys), by label, with its state. */
  providerKeys?: () => { provider: string; label: string; state: string }[];
}

/** A provider's latest reconciliation, as its gauges show it. */
export interface ReconcileGauge {
  provider: string;
  /** When it ran, epoch ms. */
  at: number;
  status: 'ok' | 'over' | 'failed';
  /** Report minus ledger, USD, over the run's range. */
  driftUsd: number;
  /** That drift over the larger side, in [-1, 1]. */
  driftRatio: number;
  /** Day and model lines the ledger priced at 0 that the provider billed. */
  zeroPriced: number;
}

const KEY_STATES = ['available', 'cooling', 'limited', 'removed'] as const;

/** What the limits tell of Redis going away (governance/admit.ts), counted here. */
export interface RedisEvents {
  fellBack(reason: RedisDownReason): void;
  /** A request decided while Redis was away, by its tier's `redis_unavailable`. */
  decidedLocally(policy: 'fail_open' | 'fail_closed'): void;
}

const REQUEST_LABELS = ['provider', 'model', 'surface', 'outcome', 'project'] as const;
const TOKEN_KINDS = [
  ['input', 'inputTokens'],
  ['output', 'outputTokens'],
  ['cached', 'cachedInputTokens'],
  ['cache_write', 'cacheWriteTokens'],
  ['reasoning', 'reasoningTokens'],
] as const;
interface Series {
  requests: CounterSeries;
  tokens: CounterSeries[];
  cost: CounterSeries;
  ttft: HistogramSeries;
  latency: HistogramSeries;
  /** The upstream call of an unrouted request, by its result: ok, or the error's code. */
  attempts: Map<string, CounterSeries>;
}

const CONNECTION_REFUSALS = ['per_client', 'max_connections', 'per_client_forwarded'] as const;
const RELOAD_RESULTS = ['ok', 'refused'] as const;

/** Seconds: a cached answer in tens of ms up to a long reasoning stream. */
const TIME_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/**
 * The gateway's Prometheus metrics, fed by one call per finished request (its ledger record) and
 * by gauges read at scrape time. Each gateway has its own registry (tests run several per process).
 * Labels never carry a key or a request id; models and projects past a bound count as `other`.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly models: BoundedLabels;
  private readonly projects: BoundedLabels;
  private readonly requests: SeriesCounter;
  private readonly tokens: SeriesCounter;
  private readonly cost: SeriesCounter;
  private readonly errors: Counter<'provider' | 'model' | 'surface' | 'type' | 'code'>;
  private readonly ttft: SeriesHistogram;
  private readonly latency: SeriesHistogram;
  private readonly attempts: SeriesCounter;
  private readonly fallbacks: Counter<'provider' | 'model' | 'reason'>;
  private readonly authFailures: Counter;
  private readonly authThrottled: Counter<'scope'>;
  private readonly connectionsRefused: Counter<'reason'>;
  private readonly connectionsReclaimed: Counter;
  /** What the limits tell of Redis going away (governance/admit.ts). */
  readonly redisEvents: RedisEvents;
  private readonly reloads: Counter<'result'>;
  private readonly toolCalls: Counter<'server' | 'tool' | 'outcome'>;
  private readonly toolDurations: Histogram<'server' | 'tool'>;
  private readonly tools: BoundedLabels;
  private readonly series = new Map<string, Series>();
  /**
   * The text GET /metrics serves: this registry's; a worker of `serve --workers N` answers for
   * every worker instead (worker-metrics.ts).
   */
  scrape: () => Promise<string> = () => this.registry.metrics();

  constructor(sources: MetricsSources, maxModels: number) {
    this.models = new BoundedLabels(maxModels);
    this.tools = new BoundedLabels(maxModels);
    this.projects = new BoundedLabels(maxModels);
    const registers = [this.registry];
    // prom-client's process and Node runtime metrics (CPU, memory, heap spaces, event loop lag,
    // handles, GC): what an operator reads first when a gateway misbehaves. Each aggregates
    // correctly across `serve --workers N` (prom-client names how: summed, or the first worker's).
    collectDefaultMetrics({ register: this.registry });
    this.requests = new SeriesCounter(
      'sluice_requests_total',
      'Model requests finished, by outcome (ok, error, cancelled, interrupted).',
      REQUEST_LABELS,
      this.registry,
    );
    this.tokens = new SeriesCounter(
      'sluice_tokens_total',
      'Tokens by kind: input, output, cached (read from the cache), cache_write, reasoning.',
      ['provider', 'model', 'surface', 'project', 'kind'],
      this.registry,
    );
    this.cost = new SeriesCounter(
      'sluice_cost_usd_total',
      'Cost in USD at the prices in use (0 for a model without a price).',
      ['provider', 'model', 'surface', 'project'],
      this.registry,
    );
    this.errors = new Counter({
      name: 'sluice_errors_total',
      help: "Requests that failed, by sluice's error type and code.",
      labelNames: ['provider', 'model', 'surface', 'type', 'code'],
      registers,
    });
    this.ttft = new SeriesHistogram(
      'sluice_time_to_first_token_seconds',
      'From the request arriving to the first output sent.',
      ['provider', 'model', 'surface'],
      TIME_BUCKETS,
      this.registry,
    );
    this.latency = new SeriesHistogram(
      'sluice_request_duration_seconds',
      'From the request arriving to its response ending.',
      ['provider', 'model', 'surface', 'outcome'],
      TIME_BUCKETS,
      this.registry,
    );
    this.attempts = new SeriesCounter(
      'sluice_upstream_attempts_total',
      'Upstream calls, by result (ok or the error code); a routed request counts each target it tried.',
      ['provider', 'model', 'result'],
      this.registry,
    );
    this.fallbacks = new Counter({
      name: 'sluice_fallbacks_total',
      help: 'Targets given up for the next one of a route, by the reason of the fallback.',
      labelNames: ['provider', 'model', 'reason'],
      registers,
    });
    this.authFailures = new Counter({
      name: 'sluice_auth_failures_total',
      help: 'Wrong keys presented (401 invalid_api_key, and those answered 429 by the failure throttle).',
      registers,
    });
    this.authThrottled = new Counter({
      name: 'sluice_auth_throttled_total',
      help: 'Requests answered 429 too_many_auth_failures, by what was over its limit: the client address or the key id.',
      labelNames: ['scope'],
      registers,
    });
    this.connectionsRefused = new Counter({
      name: 'sluice_connections_refused_total',
      help: 'Connections closed at once (per_client, max_connections) and requests behind a trusted proxy answered 429 (per_client_forwarded).',
      labelNames: ['reason'],
      registers,
    });
    this.connectionsReclaimed = new Counter({
      name: 'sluice_connections_reclaimed_total',
      help: 'Idle connections closed to make room for a new one at server.max_connections.',
      registers,
    });
    this.reloads = new Counter({
      name: 'sluice_config_reloads_total',
      help: 'Config reloads (SIGHUP, POST /admin/reload), by result: ok (applied), refused (the running config kept).',
      labelNames: ['result'],
      registers,
    });
    // Every label value from the start, at 0: a rate() over a series that appears late misses its first count.
    for (const scope of ['address', 'key_id']) this.authThrottled.inc({ scope }, 0);
    for (const reason of CONNECTION_REFUSALS) this.connectionsRefused.inc({ reason }, 0);
    const redisFallbacks = new Counter({
      name: 'sluice_redis_fallbacks_total',
      help: "Times the limits and budgets fell back to this instance's own books, Redis being away, by reason: timeout (slower than limits.redis_timeout_ms) or connection.",
      labelNames: ['reason'],
      registers,
    });
    const decidedLocally = new Counter({
      name: 'sluice_redis_fallback_requests_total',
      help: "Requests decided while Redis was away, by their tier's redis_unavailable: fail_open (on this instance's own limits and budgets) or fail_closed (refused with 503).",
      labelNames: ['policy'],
      registers,
    });
    this.redisEvents = {
      fellBack: (reason) => redisFallbacks.inc({ reason }),
      decidedLocally: (policy) => decidedLocally.inc({ policy }),
    };
    for (const result of RELOAD_RESULTS) this.reloads.inc({ result }, 0);
    this.toolCalls = new Counter({
      name: 'sluice_mcp_tool_calls_total',
      help: "MCP tool calls through /mcp, by server, tool and outcome (ok, or the error's code: mcp_tool_not_allowed, mcp_tool_timeout, ...).",
      labelNames: ['server', 'tool', 'outcome'],
      registers,
    });
    this.toolDurations = new Histogram({
      name: 'sluice_mcp_tool_call_duration_seconds',
      help: 'From an MCP tool call arriving to its answer, by server and tool.',
      labelNames: ['server', 'tool'],
      buckets: TIME_BUCKETS,
      registers,
    });
    const mcpServers = sources.mcpServers;
    if (mcpServers) {
      const up = new Gauge({
        name: 'sluice_mcp_server_up',
        help: 'Whether each upstream MCP server (mcp.servers) is connected: 1 up, 0 down or connecting (its tools hidden).',
        labelNames: ['server'],
        registers,
        collect() {
          for (const [server, status] of Object.entries(mcpServers())) up.set({ server }, status.state === 'up' ? 1 : 0);
        },
      });
    }
    const providerKeys = sources.providerKeys;
    if (providerKeys) {
      const keyState = new Gauge({
        name: 'sluice_provider_key_state',
        help: 'Each key of a provider key pool, by label: 1 for its state now (available, cooling after a 429, limited by its rate limits, removed after a 401/403), 0 for the others.',
        labelNames: ['provider', 'key', 'state'],
        registers,
        collect() {
          keyState.reset();
          for (const { provider, label, state } of providerKeys()) {
            for (const s of KEY_STATES) keyState.set({ provider, key: label, state: s }, s === state ? 1 : 0);
          }
        },
      });
    }
    new Gauge({
      name: 'sluice_open_streams',
      help: 'Streamed responses being sent now.',
      registers,
      collect() {
        this.set(sources.openStreams());
      },
    });
    new Gauge({
      name: 'sluice_ledger_queue_depth',
      help: 'Ledger records waiting to be written to the store.',
      registers,
      collect() {
        this.set(sources.ledger()?.pending ?? 0);
      },
    });
    // Counters kept by the writer itself, read at scrape time (a Gauge, as prom-client's Counter cannot be set).
    const ledgerCounts = new Gauge({
      name: 'sluice_ledger_write_failures',
      help: 'Ledger trouble since start, by kind: failures (insert attempts that failed), dropped (records never written).',
      labelNames: ['kind'],
      registers,
      collect() {
        const stats = sources.ledger();
        ledgerCounts.set({ kind: 'failures' }, stats?.failures ?? 0);
        ledgerCounts.set({ kind: 'dropped' }, stats?.dropped ?? 0);
      },
    });
    this.countLedgerExport(sources);
    const reconciliations = sources.reconciliations;
    if (reconciliations) this.gaugeReconciliations(reconciliations);
    this.countResponseCache(sources);
  }

  /**
   * The latest reconciliation of each provider (docs/operations/reconciliation.md), read at scrape
   * time. Every worker reads the same stored results, so the workers' values are not summed.
   */
  private gaugeReconciliations(latest: () => readonly ReconcileGauge[]): void {
    const gauge = (name: string, help: string, value: (g: ReconcileGauge) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['provider'],
        registers: [this.registry],
        aggregator: 'first',
        collect() {
          this.reset();
          for (const g of latest()) this.set({ provider: g.provider }, value(g));
        },
      });
    gauge(
      'sluice_reconcile_cost_drift_usd',
      "The provider's reported cost minus the ledger's, USD, in its latest reconciliation.",
      (g) => g.driftUsd,
    );
    gauge(
      'sluice_reconcile_cost_drift_ratio',
      'That cost drift over the larger of the two sides (-1 to 1).',
      (g) => g.driftRatio,
    );
    gauge(
      'sluice_reconcile_zero_priced',
      'Day and model lines of the latest reconciliation that the ledger priced at 0 and the provider billed.',
      (g) => g.zeroPriced,
    );
    gauge(
      'sluice_reconcile_over_threshold',
      'Whether the latest reconciliation is past reconcile.threshold (1) or within it (0).',
      (g) => (g.status === 'over' ? 1 : 0),
    );
    gauge('sluice_reconcile_failed', "Whether the latest reconciliation could not read the provider's report (1).", (g) =>
      g.status === 'failed' ? 1 : 0,
    );
    gauge(
      'sluice_reconcile_last_run_timestamp_seconds',
      'When the latest reconciliation ran (Unix seconds).',
      (g) => g.at / 1000,
    );
  }

  /** The response cache's counts, read at scrape time (docs/operations/response-cache.md "Metrics"). */
  private countResponseCache(sources: MetricsSources): void {
    const stats = sources.responseCache;
    if (!stats) return;
    const registers = [this.registry];
    const counted = [
      ['hits', 'Requests answered from the response cache (coalesced ones included).'],
      ['misses', 'Requests under the response cache that went upstream.'],
      ['evictions', 'Answers the memory backend evicted to stay within response_cache.memory_max_bytes.'],
    ] as const;
    for (const [kind, help] of counted) {
      new Counter({
        name: `sluice_response_cache_${kind}_total`,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(stats()[kind]);
        },
      });
    }
    new Gauge({
      name: 'sluice_response_cache_bytes',
      help: 'Bytes of answers the memory backend holds (with Redis: the bytes this instance wrote there).',
      registers,
      collect() {
        this.set(stats().bytes);
      },
    });
  }

  /** The export's own counts, read at scrape time (reset, then set: the export keeps the totals). */
  private countLedgerExport(sources: MetricsSources): void {
    const registers = [this.registry];
    new Counter({
      name: 'sluice_log_export_exported_total',
      help: 'Ledger rows the collector accepted as log records (ledger.export).',
      registers,
      collect() {
        this.reset();
        this.inc(sources.ledgerExport?.()?.exported ?? 0);
      },
    });
    new Counter({
      name: 'sluice_log_export_dropped_total',
      help: 'Ledger rows not exported (still in the store): queue_full (the collector is slow or away), export_failed.',
      labelNames: ['reason'],
      registers,
      collect() {
        const stats = sources.ledgerExport?.();
        this.reset();
        this.inc({ reason: 'queue_full' }, stats?.droppedQueueFull ?? 0);
        this.inc({ reason: 'export_failed' }, stats?.droppedFailed ?? 0);
      },
    });
  }

  /** One finished request, from its ledger record. */
  observe(record: LedgerRecord): void {
    if (record.surface === 'mcp') return this.observeToolCall(record);
    const provider = record.provider || 'none';
    const model = this.models.label(record.model, record.priceKnown) || 'none';
    const project = record.projectId === null ? '' : this.projects.label(record.projectId);
    const series = this.seriesOf(provider, model, record.surface, record.outcome, project);
    series.requests.inc();
    for (let i = 0; i < TOKEN_KINDS.length; i++) {
      const count = record[TOKEN_KINDS[i][1]];
      if (count > 0) series.tokens[i].inc(count);
    }
    if (record.costUsd > 0) series.cost.inc(record.costUsd);
    if (record.outcome !== 'ok') {
      this.errors.inc({
        provider,
        model,
        surface: record.surface,
        type: record.errorType ?? 'unknown',
        code: record.errorCode ?? 'unknown',
      });
    }
    if (record.ttftMs !== null) series.ttft.observe(record.ttftMs / 1000);
    series.latency.observe(record.latencyMs / 1000);
    this.countAttempts(record, provider, model, series);
  }

  /** An MCP tool call's row: provider is the server, model the tool (mcp/tool-record.ts). */
  private observeToolCall(record: LedgerRecord): void {
    const server = record.provider || 'none';
    // Names a client typed (an unknown tool) are bounded like models.
    const tool = this.tools.label(`${server}/${record.model}`) === 'other' ? 'other' : record.model;
    this.toolCalls.inc({ server, tool, outcome: record.outcome === 'ok' ? 'ok' : (record.errorCode ?? record.outcome) });
    this.toolDurations.observe({ server, tool }, record.latencyMs / 1000);
  }

  authFailed(): void {
    this.authFailures.inc();
  }

  authThrottle(scope: 'address' | 'key_id'): void {
    this.authThrottled.inc({ scope });
  }

  connectionRefused(reason: (typeof CONNECTION_REFUSALS)[number]): void {
    this.connectionsRefused.inc({ reason });
  }

  connectionReclaimed(): void {
    this.connectionsReclaimed.inc();
  }

  configReloaded(result: (typeof RELOAD_RESULTS)[number]): void {
    this.reloads.inc({ result });
  }

  /**
   * The series of one label set, kept: no label objects built or hashed per request (the series
   * metrics' reason, series-metrics.ts). Bounded like the labels.
   */
  private seriesOf(provider: string, model: string, surface: string, outcome: string, project: string): Series {
    const key = `${provider}\u0000${model}\u0000${surface}\u0000${outcome}\u0000${project}`;
    let series = this.series.get(key);
    if (series === undefined) {
      series = {
        requests: this.requests.of({ provider, model, surface, outcome, project }),
        tokens: TOKEN_KINDS.map(([kind]) => this.tokens.of({ provider, model, surface, project, kind })),
        cost: this.cost.of({ provider, model, surface, project }),
        ttft: this.ttft.of({ provider, model, surface }),
        latency: this.latency.of({ provider, model, surface, outcome }),
        attempts: new Map(),
      };
      this.series.set(key, series);
    }
    return series;
  }

  private countAttempts(record: LedgerRecord, provider: string, model: string, series: Series): void {
    if (!record.attempts) {
      // One target: it was called when it answered anything (a refusal before the call has no status).
      if (record.upstreamStatus !== null || record.outcome === 'ok') {
        const result = record.outcome === 'ok' ? 'ok' : (record.errorCode ?? 'unknown');
        let attempts = series.attempts.get(result);
        if (attempts === undefined) series.attempts.set(result, (attempts = this.attempts.of({ provider, model, result })));
        attempts.inc();
      }
      return;
    }
    for (const attempt of record.attempts) {
      const labels = { provider: attempt.provider, model: this.models.label(attempt.model) };
      this.attempts.of({ ...labels, result: attempt.errorCode ?? 'ok' }).inc();
      if (attempt.fallbackReason !== null) this.fallbacks.inc({ ...labels, reason: attempt.fallbackReason });
    }
  }
}

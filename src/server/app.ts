import { createResponseCache } from '../cache/create-cache.ts';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Kysely } from 'kysely';
import type { DestinationStream } from 'pino';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { Config } from '../config/schema.ts';
import { errors } from '../errors/catalog.ts';
import { toGatewayError } from '../errors/gateway-error.ts';
import { logInternalError } from '../errors/log-internal-error.ts';
import { renderErrorBody } from '../errors/render.ts';
import { refuseDisallowedModels } from '../governance/keys/allowed-models.ts';
import { requirePermission } from '../governance/users/access.ts';
import { AuditLog } from '../governance/audit/audit-log.ts';
import { AuditStore } from '../store/audit-store.ts';
import { GovernanceStore } from '../governance/keys/governance-store.ts';
import { LimitsAndBudgets } from '../governance/admit.ts';
import { recordInterrupted } from '../pipeline/record-interrupted.ts';
import type { RequestScope } from '../pipeline/request-scope.ts';
import { createServer } from '../protocol/http/node-http.ts';
import { sendJson } from '../protocol/http/send-json.ts';
import { createStreamBuffer } from '../resume/create-buffer.ts';
import type { Database } from '../store/database.ts';
import { type Ledger, ledgerSettings, startLedger } from '../store/open-ledger.ts';
import { createConsoleState } from '../console/console-state.ts';
import { UpstreamClient } from '../upstream/http-client.ts';
import { createLogger, type Logger } from '../telemetry/logger.ts';
import { GatewayMetrics } from '../telemetry/metrics.ts';
import { logRequest } from '../telemetry/request-line.ts';
import { McpOnDemand } from '../mcp/on-demand.ts';
import { Reconciler } from '../reconcile/reconciler.ts';
import { tracingFromEnv } from '../telemetry/tracing-from-env.ts';
import type { LedgerExport } from '../telemetry/ledger-export.ts';
import { ledgerExportFromConfig } from '../telemetry/ledger-export-from-config.ts';
import { createGovernance } from './auth.ts';
import { answerClientError } from './client-error.ts';
import { buildConfigParts } from './config-parts.ts';
import type { GatewayContext } from './gateway-context.ts';
import { clientKey, createClientAddressing } from '../protocol/http/client-address.ts';
import { guardConnections } from './edge/guard-connections.ts';
import { createRequestScreen } from './edge/screen-request.ts';
import { serverOptions } from './edge/server-limits.ts';
import { authThrottle } from './edge/throttle-auth.ts';
import { createReadiness } from './readiness.ts';
import { acceptRealtime } from './realtime-upgrade.ts';
import { keyViews } from './provider-keys.ts';
import { readinessChecks } from './readiness-checks.ts';
import { newRequestId } from './request-id.ts';
import { BatchObjectsStore } from '../store/batch-objects-store.ts';
import { SettlementPoller } from '../surfaces/batches/settlement-poller.ts';
import { decodePathParam, indexRoutes, matchRoute } from './route-table.ts';
import { refuseUnknownQuery } from './refuse-unknown-query.ts';
import { reloadContext, type ReloadSource } from './reload-config.ts';
import type { ReloadResult } from './reload-result.ts';
import { routes } from './routes.ts';

export interface Gateway {
  server: Server;
  /** The context of the requests to come (a reload replaces it; a request keeps the one it started with). */
  readonly context: GatewayContext;
  /** sluice's structured log (docs/operations/observability.md "Logs"). */
  logger: Logger;
  /** `reusePort`: one of several processes each binding the port (SO_REUSEPORT; `sluice serve --workers`). */
  listen(options?: { reusePort?: boolean }): Promise<AddressInfo>;
  /** Stop accepting, let open streams run up to the drain time, then end them with an error frame. */
  shutdown(drainMs?: number): Promise<void>;
  /**
   * Reads the config again from the reload source and applies it to the requests to come, or
   * refuses it and keeps the running one (docs/operations/reload.md); logged and counted. A
   * gateway without a source reloads nothing.
   */
  reload(): ReloadResult;
}

export interface GatewayOptions {
  /** Where SIGHUP and POST /admin/reload read the config again; without one, POST /admin/reload is a 404. */
  reload?: ReloadSource;
}

const routeIndex = indexRoutes(routes);

/**
 * The HTTP edge on bare node:http: the SSE path needs raw, unbuffered socket writes and the route
 * table is a handful of entries (server/routes.ts), so a framework would add a layer to the hot path and little else
 * (measured: node:http 146 us vs Fastify 150 us vs Hono's Response bridge 223 us per 21-write SSE).
 */
export function createGateway(
  config: Config,
  env: NodeJS.ProcessEnv = process.env,
  logLine?: (message: string) => void,
  logDestination?: DestinationStream,
  { reload: source }: GatewayOptions = {},
): Gateway {
  const logger = createLogger(config.log, logDestination);
  // sluice's other lines (the store, Redis, a bug's stack) are warnings in the structured log,
  // unless the caller collects them itself.
  const log = logLine ?? ((message: string) => logger.warn(message));
  const client = new UpstreamClient({
    connectTimeoutMs: config.upstream.connect_timeout_s * 1000,
    headersTimeoutMs: config.upstream.headers_timeout_s * 1000,
  });
  const governance = createGovernance(config, log);
  // The providers, routes and prices, with the checks only they can make (a ConfigError listing each problem).
  const { registry, router, pricing } = buildConfigParts(config, env, client, undefined, log);
  const scopes = new Set<RequestScope>();
  let ledger: Ledger | undefined;
  let ledgerExport: LedgerExport | undefined;
  const responseCache = createResponseCache(config, log);
  let database: Kysely<Database> | undefined;
  const metrics = config.metrics.enabled
    ? new GatewayMetrics(
        {
          openStreams: () => countStreams(scopes),
          ledger: () => ledger?.writer.stats,
          ledgerExport: () => ledgerExport?.stats,
          mcpServers: () => mcp.status(),
          reconciliations: () => reconciler.gauges(),
          responseCache: () => responseCache.stats,
          providerKeys: () => keyViews(context.registry),
        },
        config.metrics.max_label_values,
      )
    : undefined;
  // Who a request comes from, behind server.trusted_proxies too (edge/client-address.ts).
  const addressing = createClientAddressing(config.server.trusted_proxies);
  // Tiers, rate limits, concurrency and budgets: the lifecycle's admit step (docs/governance/tiers-limits-budgets.md).
  const limits = new LimitsAndBudgets(config, { pricing, log, redisEvents: metrics?.redisEvents });
  // Admin changes and console sign-ins, kept in the store (docs/operations/audit-log.md).
  const audit = new AuditLog({
    stored: config.ledger.enabled,
    retentionDays: () => context.config.audit.retention_days,
    log,
    logEntry: (entry) => logger.info({ audit: entry }, 'audit entry'),
  });
  const consoleState = createConsoleState({ keys: governance.keys, masterKey: config.auth.master_key }, config.auth.sso);
  const throttled = authThrottle({
    failuresPerMinute: config.auth.failures_per_minute,
    clientOf: (req) => clientKey(addressing.clientOf(req)),
    counters: metrics && { failed: () => metrics.authFailed(), throttled: (scope) => metrics.authThrottle(scope) },
  });
  // The MCP gateway (docs/api/mcp.md): a tool call is admitted by the same limits, and is a ledger row.
  const mcp = new McpOnDemand(config.mcp, logger, {
    admit: limits.admit,
    newId: () => newRequestId(),
    record(record) {
      context.accounting.ledger?.write(record);
      context.observe?.(record);
    },
  });
  // The ledger against the providers' own reports (docs/operations/reconciliation.md): the config of the moment.
  const reconciler = new Reconciler(() => context.config.reconcile, log);
  // Batches nobody fetched are settled in the background (batches.poll_interval_s; docs/api/batches.md).
  const settlements = new SettlementPoller({ context: () => context, newId: () => newRequestId(), log });
  /** GET /readyz over a config and its providers (docs/operations/deploy.md "Liveness and readiness"). */
  function readinessOf(config: Config, registry: GatewayContext['registry']) {
    return createReadiness(
      readinessChecks({ config, registry, database: () => database, pingRedis: limits.pingRedis, mcp: () => mcp.status() }),
    );
  }
  // Replaced whole by a reload (server/reload-config.ts); a request reads it once, when it arrives.
  let context: GatewayContext = {
    config,
    registry,
    router,
    scopes,
    settling: new Map(),
    // A console session (an HttpOnly cookie) stands for the admin key that opened it (src/console/sessions.ts);
    // wrong keys are throttled per client and key id (edge/throttle-auth.ts), on key and admin routes alike.
    authenticate: throttled(consoleState.sessions.wrap(governance.authenticate)),
    // Admin routes read the calling key from the store, never the cache: a revocation elsewhere holds at once.
    authenticateAdmin: throttled(
      consoleState.sessions.wrap(governance.authenticateAdmin, { get: (id) => governance.keys.refresh(id) }),
    ),
    admit: refuseDisallowedModels(limits.admit),
    chargeLate: limits.chargeLate,
    startedAt: Math.floor(Date.now() / 1000),
    accounting: {
      pricing,
      ledger: undefined,
      rejections: undefined,
      storeContentChars: config.ledger.store_content ? config.ledger.content_max_chars : 0,
      log,
    },
    ledgerStore: undefined,
    responsesStore: undefined,
    relayedIds: undefined,
    batchObjects: undefined,
    governance,
    audit,
    limits,
    streams: createStreamBuffer(config, log),
    // The exact response cache (docs/operations/response-cache.md): used by the requests a tier or route opts in.
    responseCache,
    metrics,
    console: consoleState,
    addressing,
    readiness: readinessOf(config, registry),
    mcp,
    reconciler,
    // Set by listen(): off unless OTEL_EXPORTER_OTLP_ENDPOINT (or the traces one) is set (docs/operations/
    // observability.md "Traces"), and the SDK is only loaded then (telemetry/tracing-from-env.ts).
    tracing: undefined,
    reloadConfig: source && (async () => [reload()]),
    observe(record) {
      try {
        metrics?.observe(record);
        logRequest(logger, record);
      } catch (err) {
        logInternalError(log, record.requestId, err);
      }
    },
  };

  /**
   * The store opens before the port does, so the first request already has its ledger; a store
   * that is down at start-up is retried in the background while records wait (store/open-ledger.ts).
   */
  async function openLedger(): Promise<void> {
    if (!config.ledger.enabled) return;
    // Ready before the writer's first batch (a journal's replay) is stored, so every row is copied.
    ledgerExport = await ledgerExportFromConfig(config, env, log);
    ledger = await startLedger(
      ledgerSettings(config, log, (stores) => {
        database = stores.database;
        context.ledgerStore = stores.ledgerStore;
        context.responsesStore = stores.responsesStore;
        context.relayedIds = stores.relayedIds;
        context.batchObjects = new BatchObjectsStore(stores.database);
        governance.attach(new GovernanceStore(stores.database));
        audit.attach(new AuditStore(stores.database));
        const listenUrl = config.store.listen_url ?? config.store.database_url;
        if (listenUrl && config.store.listen) void listenForChanges(listenUrl, stores.database);
        limits.attachStore(stores.database);
        consoleState.attachStore(stores.database);
        reconciler.attachStore(stores.database);
      }),
    );
    context.accounting.ledger = ledger.writer;
    context.accounting.journal = ledger.requests;
    ledger.writer.onWritten(limits.spendWritten);
    // Off the request path: a copy of each stored batch, queued for the collector (docs/operations/analytics-export.md).
    if (ledgerExport) ledger.writer.onWritten(exportWritten(ledgerExport, log));
    context.accounting.rejections = ledger.rejections;
  }

  /** Key changes reach the other instances within a second (docs/operations/scale-out.md). */
  async function listenForChanges(url: string, db: Kysely<Database>): Promise<void> {
    // pg is loaded by the deployments that use it (store/open-database.ts).
    const { PostgresChangeChannel } = await import('../governance/keys/postgres-change-channel.ts');
    const channel = new PostgresChangeChannel({ url, db, receiver: governance, log });
    if (governance.connect(channel)) channel.start();
  }

  /**
   * Durable mode: the requests a previous run left running get their rows (as interrupted) and
   * give back what they held, once the store can say which have a row already and Redis (if
   * any) is connected. Before the port opens when the store is open at start; else once it is.
   */
  async function recordLeftRunning(): Promise<void> {
    const open = ledger;
    if (!open || open.unfinished.length === 0) return;
    const recorded = open.opened.then(async () => {
      const records = await recordInterrupted(open.unfinished, {
        pricing,
        storedIds: (ids) => context.ledgerStore?.storedIds(ids) ?? Promise.resolve(new Set()),
        settle: (holds, record) => limits.settleInterrupted(holds, record),
        write: (record) => open.writer.write(record),
        forget: (requestId) => open.forget(requestId),
        log,
      });
      for (const record of records) context.observe?.(record);
    });
    const failed = recorded.catch((err: unknown) =>
      log(`ledger: could not record the interrupted requests (the next start will): ${(err as Error).stack ?? String(err)}`),
    );
    if (open.isOpen) await failed;
  }

  function reload(): ReloadResult {
    if (!source) return { ok: false, problems: ['this gateway has no config source to read again'] };
    const reloaded = reloadContext(context, source, { env, client, limits, governance, logger, metrics });
    if (reloaded.context) {
      // Readiness judges the providers and tiers of the config in force.
      context = { ...reloaded.context, readiness: readinessOf(reloaded.context.config, reloaded.context.registry) };
      screen = createRequestScreen(context.config);
    }
    return reloaded.result;
  }

  // Handlers still running (their ledger record may not be written yet), for a clean shutdown.
  let inFlight = 0;
  let screen = createRequestScreen(config);
  const server = createServer({ keepAliveTimeout: 65_000, ...serverOptions(config.server) }, (req, res) => {
    const requestId = newRequestId();
    inFlight++;
    dispatch(req, res, requestId)
      .catch((err: unknown) => {
        const error = toGatewayError(err);
        if (error.code === 'internal_error') logInternalError(log, requestId, err);
        sendJson(res, error.status, renderErrorBody(error), { ...error.headers, 'X-Request-ID': requestId });
      })
      .finally(() => inFlight--);
  });
  const connections = guardConnections(
    server,
    config.server,
    addressing,
    metrics && { refused: (reason) => metrics.connectionRefused(reason), reclaimed: () => metrics.connectionReclaimed() },
  );

  /** Finds the route, checks the key where the route wants it, and runs the handler. */
  async function dispatch(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    // The config this request runs with to its end, whatever a reload does meanwhile.
    const ctx = context;
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    connections.admitRequest(req, res); // a client behind a trusted proxy: its requests in flight
    if (screen(req, res)) return; // Host check and CORS, before any route (server/edge)
    const { route, rawParam, rawParams } = matchRoute(routeIndex, req.method ?? 'GET', path);
    if (route.noStore) res.setHeader('Cache-Control', 'no-store');
    const caller =
      route.auth === 'admin' ? await ctx.authenticateAdmin(req) : route.auth === 'key' ? await ctx.authenticate(req) : null;
    if (route.auth === 'admin') requirePermission(caller!, route.permission ?? (route.method === 'GET' ? 'read' : 'manage'));
    const params: Record<string, string> = {};
    for (const [name, raw] of Object.entries(rawParams)) params[name] = decodePathParam(raw, name);
    const search = new URLSearchParams(query === -1 ? '' : url.slice(query + 1));
    if (route.query) refuseUnknownQuery(search, route.query);
    await route.handle({
      req,
      res,
      requestId,
      ctx,
      param: route.param ? decodePathParam(rawParam, route.param) : '',
      params,
      search,
      caller,
    });
  }
  server.on('clientError', answerClientError);
  // GET /v1/realtime: WebSocket upgrades (docs/api/realtime.md), with the context of the moment.
  const realtime = acceptRealtime(server, () => context);

  return {
    server,
    get context() {
      return context;
    },
    logger,
    reload,
    async listen(options = {}) {
      // The token counter is not started here: its worker and encodings cost ~70 MiB of RSS (idle
      // gateway 210 -> 140 MiB, compiled), and most upstreams report usage, so it starts on the
      // first count (count-scheduler.ts).
      const [tracing] = await Promise.all([
        tracingFromEnv(env, config.traces),
        openLedger(),
        limits.start(),
        context.streams?.start(),
        responseCache.start(),
      ]);
      context.tracing = tracing;
      await recordLeftRunning();
      await mcp.start();
      reconciler.start();
      settlements.start();
      const address = await new Promise<AddressInfo>((resolve, reject) => {
        server.once('error', reject);
        const shared = options.reusePort ? { reusePort: true, exclusive: true } : {};
        server.listen({ port: config.server.port, host: config.server.host, backlog: config.server.backlog, ...shared }, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      });
      logger.info(
        {
          address: address.address,
          port: address.port,
          providers: registry.providers(),
          ledger: config.ledger.enabled ? (config.store.database_url ? 'postgres' : 'sqlite') : 'off',
          auth: config.auth.master_key ? 'master key' : 'none',
          metrics: config.metrics.enabled ? (config.metrics.public ? 'public' : 'admin') : 'off',
        },
        'sluice listening',
      );
      return address;
    },
    async shutdown(drainMs = config.server.drain_timeout_s * 1000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      consoleState.feed.close();
      reconciler.stop();
      server.closeIdleConnections();
      const deadline = Date.now() + drainMs;
      while ((context.scopes.size > 0 || realtime.open > 0) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, Math.min(50, Math.max(1, deadline - Date.now()))));
      }
      for (const scope of context.scopes) scope.abort(errors.shuttingDown());
      // Realtime sessions still open are closed (1001), their rows written before the ledger closes.
      await realtime.close();
      // Resumes served from another instance's stream would hold their connections open.
      const streamsClosed = context.streams?.close();
      // Ended streams close their keep-alive sockets once idle. Connections that have not sent a
      // request yet (a client's preconnect; undici opens one right after an aborted fetch) are
      // skipped by closeIdleConnections(): closed here rather than at node's headers timeout.
      const idleSweep = setInterval(() => {
        server.closeIdleConnections();
        for (const socket of connections.neverUsed()) socket.destroy();
      }, 20);
      await mcp.close();
      await settlements.stop();
      await closed;
      clearInterval(idleSweep);
      await streamsClosed;
      for (let waited = 0; inFlight > 0 && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
      await client.close();
      // Every record of every finished request reaches the store before we exit, within
      // ledger.shutdown_flush_ms (then the count lost is logged) and a bounded store close.
      // Budget spend still in memory goes to the store before the store closes.
      await limits.close();
      await responseCache.close();
      await governance.close();
      await audit.close();
      await ledger?.close();
      // The spans of the last requests go out before exit; the last rows' copies, within the export's timeout.
      await context.tracing?.shutdown();
      await ledgerExport?.shutdown(config.ledger.export.timeout_ms);
    },
  };
}

/**
 * The writer's listener for the export: a throw there would fail the writer's batch after it was
 * stored, so none escapes (logged once: the export is a copy, the ledger has the rows).
 */
function exportWritten(ledgerExport: LedgerExport, log: (message: string) => void): (records: readonly LedgerRecord[]) => void {
  let logged = false;
  return (records) => {
    try {
      ledgerExport.export(records);
    } catch (err) {
      if (!logged) log(`ledger export: could not queue ${records.length} record(s): ${(err as Error).stack ?? String(err)}`);
      logged = true;
    }
  };
}

function countStreams(scopes: ReadonlySet<RequestScope>): number {
  let open = 0;
  for (const scope of scopes) if (scope.streamed) open++;
  return open;
}

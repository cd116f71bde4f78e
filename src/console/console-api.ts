import type { IncomingMessage } from 'node:http';
import { recordJson } from '../accounting/record-json.ts';
import { errors } from '../errors/catalog.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { recordAudit } from '../governance/audit/record-audit.ts';
import { parseKey } from '../governance/keys/key-format.ts';
import { requireJsonContentType } from '../protocol/http/check-content-type.ts';
import { readJsonBody } from '../protocol/http/read-json-body.ts';
import { sendJson } from '../protocol/http/send-json.ts';
import type { Caller } from '../admission/admission.ts';
import { addInto, boundSeries, modelSeriesName, providerSeriesName } from './chart-series.ts';
import type { ConsoleCall } from './console-call.ts';
import { openLedgerStore, readStore } from '../store/read-store.ts';
import { InvalidLedgerQuery } from '../store/invalid-ledger-query.ts';
import type { LedgerQueryInWriteOrder } from '../store/ledger-store.ts';
import { BUCKET_BOUNDS_MS, emptyHistogram, quantileOf } from '../store/rollup-cells.ts';
import { ROLLUPS, type RollupPeriod } from '../store/rollup-tables.ts';
import { withinProjects } from '../governance/keys/project-scope.ts';
import { roleOf, visibleProjects } from '../governance/users/access.ts';
import { clearedCookie, sessionCookie } from './sessions.ts';

/**
 * POST /console/api/login {key}: the master key or an admin key opens a session whose id goes
 * back in an HttpOnly, SameSite=Strict cookie; the key itself is neither sent back nor kept.
 */
export async function handleLogin(call: ConsoleCall): Promise<void> {
  const { req, res, ctx, requestId } = call;
  const body = await readJsonBody(req, 16_384);
  const key = (body as { key?: unknown } | null)?.key;
  if (typeof key !== 'string') throw errors.invalidRequest('key must be a string.', 'key');
  // The key as a bearer key of this very request (its socket and forwarded headers kept): a wrong
  // one counts against this client in the failure throttle (server/edge/throttle-auth.ts).
  const asBearer = { headers: { ...req.headers, authorization: `Bearer ${key}` }, socket: req.socket };
  // A gateway key names its id (not secret); the master key or anything else names nothing.
  const target = { type: 'console', id: parseKey(key)?.keyId ?? null };
  let caller: Caller;
  try {
    caller = await ctx.authenticateAdmin(asBearer as IncomingMessage);
    if (!caller.admin) throw errors.adminRequired();
  } catch (err) {
    // Refused keys, not throttled clients: the throttle bounds how many a client can add.
    if (err instanceof GatewayError && (err.status === 401 || err.status === 403)) {
      await recordAudit(call, { action: 'console.sign_in_failed', target, actor: null, errorCode: err.code });
    }
    throw err;
  }
  const id = await ctx.console.sessions.open(caller);
  await recordAudit(call, { action: 'console.sign_in', target, actor: caller });
  sendJson(
    res,
    200,
    { object: 'sluice.console_session', admin: true },
    {
      'Set-Cookie': sessionCookie(id, secureCookie(req, ctx)),
      'X-Request-ID': requestId,
    },
  );
}

/** POST /console/api/logout: a JSON POST like every other (415 otherwise: no cross-site form can log a user out). */
export async function handleLogout(call: ConsoleCall): Promise<void> {
  const { req, res, ctx, requestId } = call;
  try {
    requireJsonContentType(req);
  } finally {
    // The body says nothing: read and dropped, so the connection stays usable.
    req.resume();
  }
  // The one place where a session ends: a user's also ends at the identity provider when it can.
  const holder = await ctx.console.sessions.close(req);
  if (holder)
    await recordAudit(call, { action: 'console.sign_out', target: { type: 'console', id: holder.keyId }, actor: holder });
  const endSession = holder?.userId && ctx.console.sso ? await ctx.console.sso.endSessionUrl(holder.idToken) : undefined;
  sendJson(
    res,
    200,
    { object: 'sluice.console_session', admin: false, end_session_url: endSession ?? null },
    { 'Set-Cookie': clearedCookie(secureCookie(req, ctx)), 'X-Request-ID': requestId },
  );
}

/**
 * GET /console/api/session: 200 when the cookie (or key) is an admin's or a user's, with its
 * role and (a member's) projects; the route's auth refuses the rest.
 */
export function handleSession({ res, ctx, requestId, caller }: ConsoleCall): void {
  sendJson(
    res,
    200,
    {
      object: 'sluice.console_session',
      admin: true,
      role: caller ? (roleOf(caller) ?? null) : null,
      user_id: caller?.user?.userId ?? null,
      projects: caller ? (visibleProjects(caller) ?? null) : null,
      store_content: ctx.config.ledger.store_content,
    },
    { 'X-Request-ID': requestId },
  );
}

/**
 * GET /console/api/events?after=&model=&provider=&outcome=&key_id=&project_id=: the live request
 * log as SSE, every record stored after `after` (a list page's follow_cursor; none: from now).
 */
/** What GET /console/api/events reads; any other parameter is refused (route-table.ts). */
export const EVENTS_QUERY = ['model', 'provider', 'key_id', 'project_id', 'after', 'outcome'] as const;

export async function handleEvents({ res, ctx, search, requestId, caller }: ConsoleCall): Promise<void> {
  const store = openLedgerStore(ctx);
  let query: LedgerQueryInWriteOrder = {};
  for (const [param, field] of [
    ['model', 'model'],
    ['provider', 'provider'],
    ['key_id', 'keyId'],
    ['project_id', 'projectId'],
    ['after', 'after'],
  ] as const) {
    const value = search.get(param);
    if (value?.includes('\0')) throw errors.invalidRequest(`${param} contains a NUL byte.`, param);
    if (value) query[field] = value;
  }
  const outcome = search.get('outcome');
  if (outcome) {
    if (!OUTCOMES.has(outcome)) throw errors.invalidRequest('outcome must be ok, error, cancelled or interrupted.', 'outcome');
    query.outcome = outcome as LedgerQueryInWriteOrder['outcome'];
  }
  // A member's live log: its projects' requests only.
  query = withinProjects(query, caller ? visibleProjects(caller) : undefined);
  // From now: where the write order stands (a one-row page's follow cursor).
  query.after ??= (await readStore(ctx, store.list({ limit: 1 }))).followCursor;
  try {
    await ctx.console.feed.watch(res, store, query, recordJson, { 'X-Request-ID': requestId });
  } catch (err) {
    if (err instanceof InvalidLedgerQuery) throw errors.invalidRequest(err.message, err.param);
    throw err;
  }
}

const OUTCOMES = new Set(['ok', 'error', 'cancelled', 'interrupted']);

/**
 * GET /console/api/stats?minutes=60 (1 to 1440, per minute) or ?hours=168 (1 to 2160, 90 days, per
 * hour): the charts' series from the rollups in the store (store/rollup-tables.ts; one range read
 * of a primary key, never a ledger scan), of every project or a member's projects: requests, tokens and cost per period by provider/model,
 * TTFT and latency percentiles per period (bucket upper bounds), error rate per period by
 * provider, and the streams open now. Each legend is bounded: the largest series by requests
 * and `other` (chart-series.ts).
 */
/** What GET /console/api/stats reads. */
export const STATS_QUERY = ['minutes', 'hours'] as const;

export async function handleStats({ res, ctx, search, requestId, caller }: ConsoleCall): Promise<void> {
  const { period, count } = statsRange(search);
  const step = ROLLUPS[period].periodMs;
  const now = Date.now();
  const start = Math.floor((now - (count - 1) * step) / step) * step;
  openLedgerStore(ctx); // the rollups live in the ledger's store: a 400 when it is off, a 503 while it is not open
  // A member's charts: its projects' rows only (the rollups' second key column); everyone else's sum every project.
  const reading = ctx.console.chartsSince(period, start, caller ? visibleProjects(caller) : undefined);
  if (!reading) throw errors.storeUnavailable('the store is not open yet (sluice retries it; see its log)');
  const { series, histograms } = await readStore(ctx, reading);
  const times: number[] = [];
  for (let t = start; t <= now; t += step) times.push(t / 1000);
  // A period past now is skipped: written by an instance whose clock is ahead of this one's.
  const index = (cellStart: number) => (cellStart - start) / step;
  const byPair = new Map<string, { requests: number[]; tokens: number[]; cost: number[] }>();
  const byProvider = new Map<string, { requests: number[]; errors: number[] }>();
  const ttft = times.map(() => emptyHistogram());
  const latency = times.map(() => emptyHistogram());
  const zeros = () => times.map(() => 0);
  for (const cell of series) {
    const i = index(cell.start);
    if (i >= times.length) continue;
    const name = modelSeriesName(cell.provider, cell.model);
    let pair = byPair.get(name);
    if (!pair) byPair.set(name, (pair = { requests: zeros(), tokens: zeros(), cost: zeros() }));
    pair.requests[i] += cell.requests;
    pair.tokens[i] += cell.tokens;
    pair.cost[i] += cell.costUsd;
    let provider = byProvider.get(providerSeriesName(cell.provider));
    if (!provider) byProvider.set(providerSeriesName(cell.provider), (provider = { requests: zeros(), errors: zeros() }));
    provider.requests[i] += cell.requests;
    provider.errors[i] += cell.errors;
  }
  for (const cell of histograms) {
    const i = index(cell.start);
    if (i >= times.length) continue;
    ttft[i] = cell.ttft;
    latency[i] = cell.latency;
  }
  const percentiles = (hists: number[][]) =>
    Object.fromEntries(
      (['p50', 'p95', 'p99'] as const).map((p, k) => [p, hists.map((h) => finite(quantileOf(h, [0.5, 0.95, 0.99][k])))]),
    );
  let openStreams = 0;
  for (const scope of ctx.scopes) if (scope.streamed) openStreams++;
  sendJson(
    res,
    200,
    {
      object: 'sluice.console_stats',
      source: 'rollups',
      period: period === 'minutes' ? 'minute' : 'hour',
      step_seconds: step / 1000,
      bucket_bounds_ms: BUCKET_BOUNDS_MS,
      times,
      by_model: Object.fromEntries(
        boundSeries(byPair, total, addPair, () => ({ requests: zeros(), tokens: zeros(), cost: zeros() })),
      ),
      by_provider: Object.fromEntries(
        [...boundSeries(byProvider, total, addProvider, () => ({ requests: zeros(), errors: zeros() }))].map(([name, p]) => [
          name,
          { requests: p.requests, error_rate: p.requests.map((n, i) => (n === 0 ? null : p.errors[i] / n)) },
        ]),
      ),
      ttft_ms: percentiles(ttft),
      latency_ms: percentiles(latency),
      open_streams: openStreams,
    },
    { 'X-Request-ID': requestId },
  );
}

/** A series' volume, what the legend ranks it by: its requests in the window. */
const total = (s: { requests: number[] }): number => s.requests.reduce((a, b) => a + b, 0);

function addPair(
  into: { requests: number[]; tokens: number[]; cost: number[] },
  from: { requests: number[]; tokens: number[]; cost: number[] },
): void {
  addInto(into.requests, from.requests);
  addInto(into.tokens, from.tokens);
  addInto(into.cost, from.cost);
}

function addProvider(into: { requests: number[]; errors: number[] }, from: { requests: number[]; errors: number[] }): void {
  addInto(into.requests, from.requests);
  addInto(into.errors, from.errors);
}

/** The stats' range: `minutes` (the default, 60) or `hours`, not both; a bad one is a 400 naming it. */
function statsRange(search: URLSearchParams): { period: RollupPeriod; count: number } {
  const minutes = search.get('minutes');
  const hours = search.get('hours');
  if (minutes !== null && hours !== null) throw errors.invalidRequest('Give minutes or hours, not both.', 'hours');
  const [period, raw, max] = hours === null ? (['minutes', minutes ?? '60', 1440] as const) : (['hours', hours, 2160] as const);
  const count = Number(raw);
  if (!/^\d+$/.test(raw) || count < 1 || count > max) {
    throw errors.invalidRequest(`${period} must be an integer from 1 to ${max}.`, period);
  }
  return { period, count };
}

/** Infinity (past the last bucket) is not JSON: the last bound stands for it. */
function finite(ms: number | null): number | null {
  return ms === Number.POSITIVE_INFINITY ? BUCKET_BOUNDS_MS[BUCKET_BOUNDS_MS.length - 1] : ms;
}

/**
 * `Secure` when the browser reached sluice over HTTPS: TLS here, `X-Forwarded-Proto: https` from a
 * trusted proxy, or `server.secure_cookies` (HTTPS in front, whatever the proxy forwards).
 */
function secureCookie(req: IncomingMessage, ctx: ConsoleCall['ctx']): boolean {
  return ctx.config.server.secure_cookies || ctx.addressing.isHttps(req);
}

import type { IncomingMessage } from 'node:http';
import type { Accountant } from '../accounting/accountant.ts';
import { dryRunRecord, rejectedRecord } from '../accounting/accountant.ts';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { errors } from '../errors/catalog.ts';
import { logInternalError } from '../errors/log-internal-error.ts';
import { type GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import { findTooDeep, MAX_JSON_DEPTH } from '../protocol/http/json-depth.ts';
import type { Admission, Caller } from '../admission/admission.ts';
import type { CacheSlot } from '../cache/response-cache.ts';
import { cacheVerdict, lookUpAnswer } from './cache-lookup.ts';
import type { PipelineContext } from './context.ts';
import type { Exchange } from './exchange.ts';
import type { ModelOperation, PreparedRequest } from './model-operation.ts';
import { RequestScope } from './request-scope.ts';
import { AttemptLog } from '../routing/attempts.ts';
import { OverheadClock } from './overhead-clock.ts';
import { dryRunAnswer, isDryRun } from './dry-run.ts';
import { takeTags } from './request-tags.ts';
import type { Candidate } from '../routing/plan.ts';
import { createAccountant, finalizeRecord, journalAdmission } from './request-accounting.ts';
import { requestedModelOf } from './requested-model.ts';
import { type JournaledRequest, NOT_JOURNALED } from '../store/ledger-journal.ts';
import { canonicalInput } from '../telemetry/genai-messages.ts';
import type { RequestTrace } from '../telemetry/request-trace.ts';
import type { ResolvedModel } from '../providers/registry.ts';

/**
 * What a request has got so far in its lifecycle: what its `finally` records, however far it got.
 * Each step sets what it obtained; a failure leaves the rest unset.
 */
interface Progress {
  readonly startedAt: number;
  readonly overhead: OverheadClock;
  /** The request's span and one per upstream attempt, when tracing is on (telemetry/request-trace.ts). */
  readonly trace: RequestTrace | undefined;
  readonly attempts: AttemptLog;
  caller?: Caller;
  model: string;
  /** The request's tags (metadata.tags, x-sluice-tags), recorded with it; null: none. */
  tags: string[] | null;
  accountant?: Accountant;
  admission?: Admission;
  scope?: RequestScope;
  /** The response cache's part in the request, settled with its record (cache-lookup.ts). */
  cache?: CacheSlot;
  /** Durable mode: the request's admission line in the journal, ended with its record. */
  journaled: JournaledRequest;
  failure: GatewayError | null;
  /** x-sluice-dry-run: admitted (or refused) and answered, never sent; the target it would have gone to once admitted. */
  dryRun?: { target?: ResolvedModel; streamed: boolean };
}

/**
 * The one lifecycle of every model request, whatever its surface:
 * authenticate → parse → resolve → prepare → admit → account → run, and in `finally` exactly one
 * ledger record, however it ended (a refusal at the door is recorded here and nowhere else; an
 * unauthenticated one is counted in the rejections table instead, so a flood cannot grow the store).
 * A failure before the response started becomes the surface's HTTP error.
 */
export async function handleModelRequest(
  exchange: Exchange,
  req: IncomingMessage,
  readBody: () => Promise<unknown>,
  operation: ModelOperation,
  ctx: PipelineContext,
): Promise<void> {
  const trace = ctx.tracing?.request(req.headers, operation.surface);
  const progress: Progress = {
    startedAt: Date.now(),
    overhead: new OverheadClock(),
    trace,
    attempts: new AttemptLog(trace),
    model: '',
    tags: null,
    journaled: NOT_JOURNALED,
    failure: null,
  };
  // Settling from its start, not only once its response has ended: GET /v1/requests/{id} the
  // moment the answer arrived then waits for the record, where a loaded machine could run this
  // `finally` after the client's lookup (a 404 for a request it had just made).
  let end = () => {};
  const ended = new Promise<void>((resolve) => (end = resolve));
  ctx.settling.set(exchange.requestId, ended);
  try {
    progress.failure = await runLifecycle(progress, exchange, req, readBody, operation, ctx);
    if (progress.failure?.code === 'internal_error') logInternalError(ctx.accounting.log, exchange.requestId, progress.failure);
  } catch (err) {
    progress.failure = toGatewayError(err);
    if (progress.failure.code === 'internal_error') logInternalError(ctx.accounting.log, exchange.requestId, err);
    progress.overhead.stop(exchange.res);
    exchange.sendError(progress.failure);
  } finally {
    progress.scope?.dispose();
    let record: LedgerRecord | undefined;
    try {
      record = await recordOutcome(progress, exchange.requestId, operation, ctx);
    } finally {
      if (ctx.settling.get(exchange.requestId) === ended) ctx.settling.delete(exchange.requestId);
      end();
      // A whole answer is kept only now: a budget's stop is known from the final record.
      progress.cache?.settle(record?.outcome === 'ok' && record.finishReason !== 'budget_exhausted');
    }
  }
}

/** authenticate → parse → resolve → prepare → admit → account → run; returns the run's failure, if any. */
async function runLifecycle(
  progress: Progress,
  exchange: Exchange,
  req: IncomingMessage,
  readBody: () => Promise<unknown>,
  operation: ModelOperation,
  ctx: PipelineContext,
): Promise<GatewayError | null> {
  // A dry run is recorded as one however far it gets (a bad body's 400 included).
  if (isDryRun(req)) progress.dryRun = { streamed: false };
  const { caller, candidates, prepared, affinity } = await prepareRequest(progress, exchange, req, readBody, operation, ctx);
  const target = candidates[0].target;
  const question = { caller, surface: operation.surface, model: progress.model, candidates, prepared, headers: req.headers };
  if (progress.dryRun) {
    // Asked, never taken: a dry run neither takes a kept answer nor waits on an identical request.
    progress.dryRun.streamed = prepared.streamed;
    const verdict = await cacheVerdict(question, ctx);
    const admission = await admit(progress, exchange, caller, operation, target, prepared, verdict === 'hit', ctx);
    progress.dryRun.target = target;
    progress.overhead.stop(exchange.res);
    exchange.sendJson(200, dryRunAnswer(exchange.requestId, candidates, verdict, admission.preview));
    return null;
  }
  const cache = (progress.cache = await progress.overhead.excluding(lookUpAnswer(question, ctx)));
  const admission = await admit(progress, exchange, caller, operation, target, prepared, cache.outcome === 'hit', ctx);
  // Said once admitted: a refused request was answered neither from the cache nor upstream.
  exchange.res.setHeader('x-sluice-cache', cache.outcome);
  progress.accountant = createAccountant(
    ctx.accounting,
    exchange.requestId,
    caller,
    prepared.request,
    target,
    operation.surface,
    prepared.streamed,
    progress.trace?.transcript,
    prepared.input?.count,
    cache.outcome === 'hit',
  );
  // Durable mode: from here on a crash leaves the request recorded as interrupted, not lost.
  progress.journaled = journalAdmission(ctx.accounting, progress.accountant, prepared.request, admission, progress.tags);
  progress.scope = openScope(exchange, admission, prepared, ctx, affinity);
  progress.overhead.stop(exchange.res);
  return prepared.run({
    exchange,
    scope: progress.scope,
    accountant: progress.accountant,
    target,
    candidates,
    attempts: progress.attempts,
    ctx,
    admission,
    transcript: progress.trace?.transcript,
    cache,
  });
}

/**
 * authenticate → parse → resolve → prepare. The body as sent is read and parsed in this frame,
 * which returns before the run: it is not held for the whole response (the parsed request is what
 * the rest reads).
 */
async function prepareRequest(
  progress: Progress,
  exchange: Exchange,
  req: IncomingMessage,
  readBody: () => Promise<unknown>,
  operation: ModelOperation,
  ctx: PipelineContext,
): Promise<{ caller: Caller; candidates: readonly Candidate[]; prepared: PreparedRequest; affinity: string | undefined }> {
  const caller = await ctx.authenticate(req);
  progress.caller = caller;
  // A resumable stream is resumed by its caller's project only (docs/streams/resume.md).
  exchange.resume?.recording.claim(caller.projectId);
  const body = await progress.overhead.excluding(readBody());
  progress.model = requestedModelOf(body);
  const tooDeep = findTooDeep(body);
  if (tooDeep) throw errors.invalidRequest(`${tooDeep} is nested more than ${MAX_JSON_DEPTH} levels deep.`, tooDeep);
  const { body: untagged, tags } = takeTags(body, req.headers['x-sluice-tags']);
  progress.tags = tags;
  const parsed = operation.parse(untagged, ctx, caller);
  progress.model = parsed.model;
  // Resolve is routing: the targets to try, healthy ones first (src/routing).
  // What a sticky route and a provider's key pool stick the request by: the body's, else the session header.
  const affinity = parsed.stickyKey ?? sessionOf(req);
  const candidates = ctx.router.order(ctx.router.plan(parsed.model, parsed.fallbacks), { stickyKey: affinity });
  refuseDisallowedFallbacks(caller, candidates);
  progress.attempts.candidates = candidates.length;
  const prepared = await parsed.prepare(candidates[0].target, ctx);
  // Only when the trace captures content (docs/operations/observability.md "Traces (OpenTelemetry)"): built lazily.
  progress.trace?.captureInput(() => prepared.traceInput?.() ?? canonicalInput(prepared.request, operation.surface));
  return { caller, candidates, prepared, affinity };
}

/** `x-sluice-session`: a conversation's id, for clients that send no prompt_cache_key or user. */
function sessionOf(req: IncomingMessage): string | undefined {
  const session = req.headers['x-sluice-session'];
  return typeof session === 'string' && session !== '' ? session.slice(0, 256) : undefined;
}

/** The admit step; the headers it sets (rate limits) go on the response. */
async function admit(
  progress: Progress,
  exchange: Exchange,
  caller: Caller,
  operation: ModelOperation,
  target: ResolvedModel,
  prepared: PreparedRequest,
  cached: boolean,
  ctx: PipelineContext,
): Promise<Admission> {
  const admission = await ctx.admit({
    requestId: exchange.requestId,
    caller,
    surface: operation.surface,
    target,
    request: prepared.request,
    inputTokens: prepared.input?.estimatedTokens,
    units: prepared.units,
    streamed: prepared.streamed,
    cached,
    dryRun: progress.dryRun !== undefined,
  });
  progress.admission = admission;
  if (admission.headers) for (const [name, value] of Object.entries(admission.headers)) exchange.res.setHeader(name, value);
  return admission;
}

/** The request's scope: the caller's tier may set its own deadline and idle timeout, and hold a stream to its budget. */
function openScope(
  exchange: Exchange,
  admission: Admission,
  prepared: PreparedRequest,
  ctx: PipelineContext,
  affinity: string | undefined,
): RequestScope {
  return new RequestScope(exchange.res, {
    deadlineMs: admission.deadline?.ms ?? prepared.deadlineMs,
    deadlineError: admission.deadline?.error,
    idleTimeoutMs: admission.idleTimeoutMs,
    watch: admission.watch,
    // A client leaving a stream may let it drain (docs/streams/contract.md "Disconnect policy"); any other request is cancelled.
    onDisconnect: prepared.streamed ? (admission.onDisconnect ?? ctx.config.stream.on_disconnect) : 'cancel',
    disconnectGraceMs: prepared.streamed ? exchange.resume?.graceMs : undefined,
    scopes: ctx.scopes,
    streamed: prepared.streamed,
    affinity,
  });
}

/**
 * The request's one ledger record, however far it got. Refused before the caller was known: anyone
 * can send these, so they are counted per minute and reason (store/rejection-counter.ts) instead of
 * growing the ledger by a row each.
 */
async function recordOutcome(
  progress: Progress,
  requestId: string,
  operation: ModelOperation,
  ctx: PipelineContext,
): Promise<LedgerRecord | undefined> {
  const { caller, failure } = progress;
  if (!caller && failure) {
    ctx.accounting.rejections?.count(operation.surface, failure.code);
    progress.trace?.refused(failure);
    return undefined;
  }
  const dryRunTarget = failure ? undefined : progress.dryRun?.target;
  const settled = progress.accountant
    ? finalizeRecord(ctx.accounting, progress.accountant, failure)
    : Promise.resolve(
        caller && dryRunTarget
          ? dryRunRecord(
              requestId,
              operation.surface,
              dryRunTarget,
              progress.dryRun?.streamed ?? false,
              progress.startedAt,
              caller,
            )
          : rejectedRecord(
              requestId,
              failure ?? toGatewayError('no failure recorded'),
              operation.surface,
              progress.model,
              progress.startedAt,
              caller,
            ),
      );
  ctx.settling.set(requestId, settled);
  try {
    let record = withRunDetails(progress, await settled);
    try {
      // The admission may amend the record (an abandoned stream its tier does not bill).
      record = progress.admission?.settle(record) ?? record;
    } finally {
      write(ctx, record);
      ctx.observe?.(record);
      progress.trace?.end(record);
    }
    return record;
  } finally {
    ctx.settling.delete(requestId);
    progress.journaled.end();
  }
}

/** The record with what the run learnt beside the accountant: the upstream's request id, the attempts, the overhead. */
function withRunDetails(progress: Progress, settled: LedgerRecord): LedgerRecord {
  let record = settled;
  if (progress.scope?.upstreamRequestId) record = { ...record, upstreamRequestId: progress.scope.upstreamRequestId };
  // The key of the provider that answered: a route that fell back from a pool to another provider has none.
  const key = progress.scope?.providerKey;
  if (key && key.provider === record.provider) record = { ...record, providerKey: key.label };
  const tried = progress.attempts.forRecord();
  if (tried) record = { ...record, attempts: tried };
  if (progress.tags) record = { ...record, tags: progress.tags };
  if (progress.cache?.optedIn) record = { ...record, responseCache: progress.cache.outcome };
  if (progress.dryRun) record = { ...record, dryRun: true };
  return { ...record, overheadMs: progress.overhead.ms };
}

/**
 * A key's allowed models hold for every target the request may reach: the route's targets come
 * with the route's name (allowed with it), but a name in the request's own `models` is checked
 * like the model itself, so a fallback list cannot reach around the key's list.
 */
function refuseDisallowedFallbacks(caller: Caller, candidates: readonly Candidate[]): void {
  const allowed = caller.allowedModels;
  if (!allowed) return;
  for (const c of candidates) {
    if (!allowed.includes(c.via) && !allowed.includes(c.key)) throw errors.modelNotAllowed(c.via);
  }
}

function write(ctx: PipelineContext, record: LedgerRecord): void {
  try {
    ctx.accounting.ledger?.write(record);
  } catch (err) {
    ctx.accounting.log(`ledger: could not queue the record of ${record.requestId}: ${(err as Error).message}`);
  }
}

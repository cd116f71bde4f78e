import type { IncomingMessage } from 'node:http';
import type { Accountant } from '../accounting/accountant.ts';
import { rejectedRecord } from '../accounting/accountant.ts';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { errors } from '../errors/catalog.ts';
import { logInternalError } from '../errors/log-internal-error.ts';
import { type GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import { findTooDeep, MAX_JSON_DEPTH } from '../protocol/http/json-depth.ts';
import type { Admission, Caller } from '../admission/admission.ts';
import type { PipelineContext } from './context.ts';
import type { Exchange } from './exchange.ts';
import type { ModelOperation } from './model-operation.ts';
import { RequestScope } from './request-scope.ts';
import { AttemptLog } from '../routing/attempts.ts';
import { OverheadClock } from './overhead-clock.ts';
import type { Candidate } from '../routing/plan.ts';
import { createAccountant, finalizeRecord, journalAdmission } from './request-accounting.ts';
import { type JournaledRequest, NOT_JOURNALED } from '../store/ledger-journal.ts';
import { canonicalInput } from '../telemetry/genai-messages.ts';

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
  const startedAt = Date.now();
  const overhead = new OverheadClock();
  let caller: Caller | undefined;
  let model = '';
  let accountant: Accountant | undefined;
  let admission: Admission | undefined;
  let scope: RequestScope | undefined;
  let journaled: JournaledRequest = NOT_JOURNALED;
  let failure: GatewayError | null = null;
  // The request's span and one per upstream attempt, when tracing is on (telemetry/request-trace.ts).
  const trace = ctx.tracing?.request(req.headers, operation.surface);
  const attempts = new AttemptLog(trace);
  try {
    caller = await ctx.authenticate(req);
    // A resumable stream is resumed by its caller's project only (docs/streams/resume.md).
    exchange.resume?.recording.claim(caller.projectId);
    let body = await overhead.excluding(readBody());
    const tooDeep = findTooDeep(body);
    if (tooDeep) throw errors.invalidRequest(`${tooDeep} is nested more than ${MAX_JSON_DEPTH} levels deep.`, tooDeep);
    const parsed = operation.parse(body, ctx, caller);
    // This frame is suspended for the whole response, its variables with it: the body as sent is
    // not needed past its parse (the parsed request is what the rest reads).
    body = undefined;
    model = parsed.model;
    // Resolve is routing: the targets to try, healthy ones first (src/routing).
    const candidates = ctx.router.order(ctx.router.plan(model, parsed.fallbacks), { stickyKey: parsed.stickyKey });
    refuseDisallowedFallbacks(caller, candidates);
    attempts.candidates = candidates.length;
    const target = candidates[0].target;
    const prepared = await parsed.prepare(target, ctx);
    // Only when the trace captures content (docs/operations/observability.md "Traces (OpenTelemetry)"): built lazily.
    trace?.captureInput(() => prepared.traceInput?.() ?? canonicalInput(prepared.request, operation.surface));
    admission = await ctx.admit({
      requestId: exchange.requestId,
      caller,
      surface: operation.surface,
      target,
      request: prepared.request,
      inputTokens: prepared.input?.estimatedTokens,
      streamed: prepared.streamed,
    });
    if (admission.headers) for (const [name, value] of Object.entries(admission.headers)) exchange.res.setHeader(name, value);
    accountant = createAccountant(
      ctx.accounting,
      exchange.requestId,
      caller,
      prepared.request,
      target,
      operation.surface,
      prepared.streamed,
      trace?.transcript,
      prepared.input?.count,
    );
    // Durable mode: from here on a crash leaves the request recorded as interrupted, not lost.
    journaled = journalAdmission(ctx.accounting, accountant, prepared.request, admission);
    // The caller's tier may set its own deadline and idle timeout, and hold a stream to its budget.
    scope = new RequestScope(exchange.res, {
      deadlineMs: admission.deadline?.ms ?? prepared.deadlineMs,
      deadlineError: admission.deadline?.error,
      idleTimeoutMs: admission.idleTimeoutMs,
      watch: admission.watch,
      // A client leaving a stream may let it drain (docs/streams/contract.md "Disconnect policy"); any other request is cancelled.
      onDisconnect: prepared.streamed ? (admission.onDisconnect ?? ctx.config.stream.on_disconnect) : 'cancel',
      disconnectGraceMs: prepared.streamed ? exchange.resume?.graceMs : undefined,
      scopes: ctx.scopes,
      streamed: prepared.streamed,
    });
    overhead.stop(exchange.res);
    failure = await prepared.run({
      exchange,
      scope,
      accountant,
      target,
      candidates,
      attempts,
      ctx,
      admission,
      transcript: trace?.transcript,
    });
    if (failure?.code === 'internal_error') logInternalError(ctx.accounting.log, exchange.requestId, failure);
  } catch (err) {
    failure = toGatewayError(err);
    if (failure.code === 'internal_error') logInternalError(ctx.accounting.log, exchange.requestId, err);
    overhead.stop(exchange.res);
    exchange.sendError(failure);
  } finally {
    scope?.dispose();
    if (!caller && failure) {
      // Refused before the caller was known: anyone can send these, so they are counted per
      // minute and reason (store/rejection-counter.ts) instead of growing the ledger by a row each.
      ctx.accounting.rejections?.count(operation.surface, failure.code);
      trace?.refused(failure);
    } else {
      const { requestId } = exchange;
      const settled = accountant
        ? finalizeRecord(ctx.accounting, accountant, failure)
        : Promise.resolve(
            rejectedRecord(
              requestId,
              failure ?? toGatewayError('no failure recorded'),
              operation.surface,
              model,
              startedAt,
              caller,
            ),
          );
      ctx.settling.set(requestId, settled);
      try {
        let record = await settled;
        if (scope?.upstreamRequestId) record = { ...record, upstreamRequestId: scope.upstreamRequestId };
        const tried = attempts.forRecord();
        if (tried) record = { ...record, attempts: tried };
        record = { ...record, overheadMs: overhead.ms };
        try {
          // The admission may amend the record (an abandoned stream its tier does not bill).
          record = admission?.settle(record) ?? record;
        } finally {
          write(ctx, record);
          ctx.observe?.(record);
          trace?.end(record);
        }
      } finally {
        ctx.settling.delete(requestId);
        journaled.end();
      }
    }
  }
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

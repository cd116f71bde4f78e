import type { CanonicalEvent, FallbackEvent } from '../protocol/canonical/events.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import type { CallContext, EventBatches } from '../providers/types.ts';
import type { AttemptContext } from '../routing/attempt-target.ts';
import type { Candidate } from '../routing/plan.ts';
import { routedCall, routedComplete } from '../routing/route-complete.ts';
import { routedItems, routedStream, type StreamReading } from '../routing/route-stream.ts';
import { requestFor } from '../routing/target-request.ts';
import { callOnce, type Outcome } from './call-once.ts';
import type { RunScope } from './model-operation.ts';

/**
 * What every upstream call of the request is told beside its signal: where the upstream's headers
 * go (its request id), and for a provider's key pool the request's affinity and where the key's
 * label goes (the ledger's provider_key).
 */
export function keyContext(run: RunScope): Pick<CallContext, 'onResponse' | 'affinity' | 'onProviderKey'> {
  return { onResponse: run.scope.upstreamResponded, affinity: run.scope.affinity, onProviderKey: run.scope.providerKeyChosen };
}

function attemptContext(run: RunScope): AttemptContext {
  return { candidates: run.candidates, health: run.ctx.router.health, log: run.attempts, signal: run.scope.signal };
}

/**
 * The `open` of a canonical stream over the request's candidates (src/routing/route-stream.ts):
 * each target gets the request with its own parameters; a switch is told to the accountant at once.
 */
export function openRouted(run: RunScope, request: CanonicalRequest): (signal: AbortSignal) => Promise<EventBatches> {
  const requestId = run.exchange.requestId;
  return routedStream(
    attemptContext(run),
    (candidate, signal, traceHeaders) =>
      candidate.target.adapter.stream(requestFor(request, candidate), candidate.target.model, {
        signal,
        requestId,
        traceHeaders,
        ...keyContext(run),
      }),
    (event) => run.accountant.observe(event),
  );
}

/** The non-streaming call over the request's candidates (src/routing/route-complete.ts). */
export function completeRouted(run: RunScope, request: CanonicalRequest): () => Promise<CanonicalEvent[]> {
  const requestId = run.exchange.requestId;
  return () =>
    routedComplete(
      attemptContext(run),
      (candidate, signal, traceHeaders) =>
        candidate.target.adapter.complete(requestFor(request, candidate), candidate.target.model, {
          signal,
          requestId,
          traceHeaders,
          ...keyContext(run),
        }),
      (event) => run.accountant.observe(event),
    );
}

/**
 * The candidates a relay can serve: a relayed surface passes the upstream's bytes on as they came,
 * so it falls back only to targets relayed the same way (docs/routing.md); the others
 * are left out. The first candidate is always kept (the relay was chosen for it).
 */
function relayCandidates<R>(
  run: RunScope,
  relayOf: (candidate: Candidate) => R | undefined,
): { ctx: AttemptContext; relayFor: (candidate: Candidate) => R } {
  const relays = new Map<Candidate, R>();
  for (const candidate of run.candidates) {
    const relay = relayOf(candidate);
    if (relay !== undefined) relays.set(candidate, relay);
  }
  const relayFor = (candidate: Candidate): R => {
    const relay = relays.get(candidate);
    // The attempt loops try only the candidates given to them, all of which have a relay.
    if (relay === undefined) throw new Error(`${candidate.key} has no relay`);
    return relay;
  };
  return { ctx: { ...attemptContext(run), candidates: [...relays.keys()] }, relayFor };
}

/** An upstream API a surface relays as it came: its stream's items, its whole answer. */
export interface Relay<Item, Whole, Context extends CallContext> {
  stream(body: Record<string, unknown>, model: string, ctx: Context): Promise<AsyncIterable<Item[]>>;
  complete(body: Record<string, unknown>, model: string, ctx: Context): Promise<Whole>;
}

/**
 * A relayed surface's calls over its candidates (relayCandidates): each target gets the body as
 * it takes it (`bodyFor`) and the call context of the request, with the surface's own fields
 * (`extra`); a switch is told to `onFallback`.
 */
export function routedRelay<Item, Whole, Context extends CallContext>(
  run: RunScope,
  relayOf: (candidate: Candidate) => Relay<Item, Whole, Context> | undefined,
  extra: Omit<Context, keyof CallContext>,
  onFallback: (event: FallbackEvent) => void,
) {
  const { ctx, relayFor } = relayCandidates(run, relayOf);
  run.attempts.candidates = ctx.candidates.length;
  const call = (signal: AbortSignal, traceHeaders: Record<string, string> | undefined) =>
    ({ signal, requestId: run.exchange.requestId, traceHeaders, ...keyContext(run), ...extra }) as Context;
  return {
    /** The `open` of runStream; `reading` says when an attempt answered or failed. */
    stream: (bodyFor: (candidate: Candidate) => Record<string, unknown>, reading: StreamReading<Item>) =>
      routedItems(
        ctx,
        (candidate, signal, traceHeaders) =>
          relayFor(candidate).stream(bodyFor(candidate), candidate.target.model, call(signal, traceHeaders)),
        onFallback,
        reading,
      ),
    /** The whole answer, under the request's scope (callOnce: a failure is sent as the surface's HTTP error). */
    complete: (bodyFor: (candidate: Candidate) => Record<string, unknown>): Promise<Outcome<Whole>> =>
      callOnce(run.exchange, run.scope, async () => {
        const { value } = await routedCall(
          ctx,
          (candidate, signal, traceHeaders) =>
            relayFor(candidate).complete(bodyFor(candidate), candidate.target.model, call(signal, traceHeaders)),
          onFallback,
          () => null,
        );
        return value;
      }),
  };
}

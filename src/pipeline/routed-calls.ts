import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import type { EventBatches } from '../providers/types.ts';
import type { AttemptContext } from '../routing/attempt-target.ts';
import type { Candidate } from '../routing/plan.ts';
import { routedComplete } from '../routing/route-complete.ts';
import { routedStream } from '../routing/route-stream.ts';
import { requestFor } from '../routing/target-request.ts';
import type { RunScope } from './model-operation.ts';

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
        onResponse: run.scope.upstreamResponded,
        traceHeaders,
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
          onResponse: run.scope.upstreamResponded,
          traceHeaders,
        }),
      (event) => run.accountant.observe(event),
    );
}

/**
 * The candidates a relay can serve: a relayed surface passes the upstream's bytes on as they came,
 * so it falls back only to targets relayed the same way (README "Routes and fallback"); the others
 * are left out. The first candidate is always kept (the relay was chosen for it).
 */
export function relayCandidates<R>(
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

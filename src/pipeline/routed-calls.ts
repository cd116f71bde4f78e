import { errors } from '../errors/catalog.ts';
import type { CanonicalEvent, FallbackEvent } from '../protocol/canonical/events.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import type { CallContext, EventBatches, MediaCall } from '../providers/types.ts';
import type { UpstreamResponse } from '../upstream/http-client.ts';
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
  const { answer, keep } = run.cache;
  // A cache hit replays its answer through the same stream loop and encoders as a live one.
  if (answer) return () => Promise.resolve(replayed(answer));
  const open = openUpstream(run, request);
  return keep ? async (signal) => kept(await open(signal), keep) : open;
}

/** The cached answer as the stream loop reads an upstream's: one read of every event. */
async function* replayed(answer: readonly CanonicalEvent[]): EventBatches {
  yield [...answer];
}

/** The upstream's reads as they come, each also handed to the response cache. */
async function* kept(batches: EventBatches, keep: (events: readonly CanonicalEvent[]) => void): EventBatches {
  for await (const batch of batches) {
    keep(batch);
    yield batch;
  }
}

function openUpstream(run: RunScope, request: CanonicalRequest): (signal: AbortSignal) => Promise<EventBatches> {
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

/**
 * A media call (images, audio) over the request's candidates that serve one (relayCandidates):
 * the provider's own endpoint, the body as the client sent it under each target's model name.
 * `read` takes the 2xx answer inside the attempt, so a whole answer that fails while it is read
 * falls back too; a stream or audio is handed on unread. A first target without media is a 400
 * naming `model`. Resolves to what `read` made, or the failure, sent as the surface's HTTP error.
 */
export function routedMedia<T>(
  run: RunScope,
  call: MediaCall,
  read: (res: UpstreamResponse, signal: AbortSignal) => Promise<T>,
): Promise<Outcome<T>> {
  return callOnce(run.exchange, run.scope, async () => {
    const { provider, model } = run.target;
    if (!run.target.adapter.media) {
      throw errors.invalidRequest(
        `${provider}/${model} does not offer /v1/${call.path}: sluice relays images and audio to OpenAI-compatible providers and Azure only.`,
        'model',
      );
    }
    const { ctx, relayFor } = relayCandidates(run, (candidate) => candidate.target.adapter.media);
    run.attempts.candidates = ctx.candidates.length;
    const { value } = await routedCall(
      ctx,
      async (candidate, signal, traceHeaders) => {
        const res = await relayFor(candidate).send(call, candidate.target.model, {
          signal,
          requestId: run.exchange.requestId,
          onResponse: run.scope.upstreamResponded,
          traceHeaders,
        });
        return read(res, signal);
      },
      (event) => run.accountant.observe(event),
      () => null,
    );
    return value;
  });
}

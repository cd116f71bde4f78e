import { type Redact, redactError } from '../errors/redact.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import type { MessagesRelay, MessagesRelayItem, ProviderAdapter, RelayItem, ResponsesRelay } from './types.ts';

/**
 * The one place upstream error text leaves the provider layer: every GatewayError an adapter
 * throws or streams (HTTP errors, in-stream errors, undecodable chunks that quote the upstream's
 * bytes) passes the redactor before it can reach a client, a log or the ledger. Wrapping the
 * adapter keeps each provider's map-error and decoders free of it, and covers errors built
 * anywhere under them. The batches are not copied: an error event ends a stream, so at most one
 * event per stream is replaced, in place.
 */
export function redactAdapter(adapter: ProviderAdapter, redact: Redact): ProviderAdapter {
  const clean = (err: unknown): unknown => (err instanceof GatewayError ? redactError(err, redact) : err);
  const events = (batch: CanonicalEvent[]): CanonicalEvent[] => {
    for (let i = 0; i < batch.length; i++) {
      const e = batch[i];
      if (e.type === 'error') batch[i] = { type: 'error', error: redactError(e.error, redact) };
    }
    return batch;
  };
  const wrapped: ProviderAdapter = {
    ...adapter,
    async stream(request, model, ctx) {
      try {
        return mapBatches(await adapter.stream(request, model, ctx), events, clean);
      } catch (err) {
        throw clean(err);
      }
    },
    async complete(request, model, ctx) {
      try {
        return events(await adapter.complete(request, model, ctx));
      } catch (err) {
        throw clean(err);
      }
    },
  };
  if (adapter.responses) wrapped.responses = redactRelay(adapter.responses, redact, clean);
  if (adapter.messages) wrapped.messages = redactMessagesRelay(adapter.messages, redact, clean);
  if (adapter.countTokens) wrapped.countTokens = guard(clean)(adapter.countTokens.bind(adapter));
  if (adapter.embed) wrapped.embed = guard(clean)(adapter.embed.bind(adapter));
  if (adapter.batches) {
    const batches = adapter.batches;
    wrapped.batches = {
      ...batches,
      send: guard(clean)(batches.send.bind(batches)),
      mapError: (status, headers, text) => redactError(batches.mapError(status, headers, text), redact),
    };
  }
  if (adapter.media) wrapped.media = { send: guard(clean)(adapter.media.send.bind(adapter.media)) };
  return wrapped;
}

/** `call` with its failure passed through `clean`. */
function guard(clean: (err: unknown) => unknown) {
  return <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await call(...args);
      } catch (err) {
        throw clean(err);
      }
    };
}

/**
 * A relayed Messages stream goes out byte for byte (Anthropic's own errors do not quote keys);
 * what sluice says itself, the HTTP errors and the errors it records, passes the redactor.
 */
function redactMessagesRelay(relay: MessagesRelay, redact: Redact, clean: (err: unknown) => unknown): MessagesRelay {
  const items = (batch: MessagesRelayItem[]): MessagesRelayItem[] => {
    for (let i = 0; i < batch.length; i++) {
      const item = batch[i];
      if ('event' in item && item.event.type === 'error')
        batch[i] = { ...item, event: { type: 'error', error: redactError(item.event.error, redact) } };
    }
    return batch;
  };
  const guarded = guard(clean);
  return {
    stream: guarded(async (body, model, ctx) => mapBatches(await relay.stream(body, model, ctx), items, clean)),
    complete: guarded((body, model, ctx) => relay.complete(body, model, ctx)),
    countTokens: guarded((body, model, ctx) => relay.countTokens(body, model, ctx)),
  };
}

/**
 * A relayed Responses stream is sent as the upstream wrote it, except the error messages of its
 * failure frames (`error`, `response.failed`): only those strings are upstream error text (the
 * rest holds ids that must not change), and a frame is re-serialized only when one changed.
 */
function redactRelay(relay: ResponsesRelay, redact: Redact, clean: (err: unknown) => unknown): ResponsesRelay {
  const items = (batch: RelayItem[]): RelayItem[] => {
    for (let i = 0; i < batch.length; i++) {
      const item = batch[i];
      if ('error' in item) batch[i] = { error: redactError(item.error, redact) };
      else if (item.frame.event === 'error' || item.frame.event === 'response.failed') {
        const data = redactFailureFrame(item.frame.data, redact);
        if (data !== item.frame.data) batch[i] = { frame: { ...item.frame, data } };
      }
    }
    return batch;
  };
  return {
    async stream(body, model, ctx) {
      try {
        return mapBatches(await relay.stream(body, model, ctx), items, clean);
      } catch (err) {
        throw clean(err);
      }
    },
    async complete(body, model, ctx) {
      try {
        const response = await relay.complete(body, model, ctx);
        redactMessageIn(response, redact);
        return response;
      } catch (err) {
        throw clean(err);
      }
    },
  };
}

/** `{"error":{"message"}}` (an `error` event) or `{"response":{"error":{"message"}}}` (response.failed), redacted. */
function redactFailureFrame(data: string, redact: Redact): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return redact(data);
  }
  if (!parsed || typeof parsed !== 'object') return data;
  const p = parsed as { response?: unknown };
  const changed =
    redactMessageIn(p, redact) || (p.response !== null && typeof p.response === 'object' && redactMessageIn(p.response, redact));
  return changed ? JSON.stringify(parsed) : data;
}

/** Redacts `holder.error.message` in place; true when it changed. */
function redactMessageIn(holder: object, redact: Redact): boolean {
  const error = (holder as { error?: unknown }).error;
  if (!error || typeof error !== 'object') return false;
  const e = error as { message?: unknown };
  if (typeof e.message !== 'string') return false;
  const message = redact(e.message);
  if (message === e.message) return false;
  e.message = message;
  return true;
}

/**
 * The batches with `map` applied, and a failure of the iteration passed through `clean`. A plain
 * iterator rather than an async generator: no extra generator state per batch on the hot path,
 * and `return()` reaches the upstream body at once when the consumer stops early.
 */
function mapBatches<T>(
  source: AsyncIterable<T[]>,
  map: (batch: T[]) => T[],
  clean: (err: unknown) => unknown,
): AsyncIterable<T[]> {
  return {
    [Symbol.asyncIterator]() {
      const inner = source[Symbol.asyncIterator]();
      const fail = (err: unknown): never => {
        throw clean(err);
      };
      return {
        next: () =>
          inner.next().then((r) => {
            if (!r.done) map(r.value);
            return r;
          }, fail),
        return: (value?: unknown) =>
          inner.return ? inner.return(value).then(undefined, fail) : Promise.resolve({ done: true, value: undefined }),
        // An iterator's throw() hands the caller's reason back unchanged, whatever it is.
        // oxlint-disable-next-line typescript/prefer-promise-reject-errors
        throw: (err?: unknown) => (inner.throw ? inner.throw(err).then(undefined, fail) : Promise.reject(err)),
      } as AsyncIterator<T[]>;
    },
  };
}

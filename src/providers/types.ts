import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import type { SseFrame } from '../protocol/sse/parse-upstream.ts';

export interface CallContext {
  signal: AbortSignal;
  requestId: string;
  /** Told the upstream's response headers as soon as they arrive, whatever the status (its request id). */
  onResponse?: (headers: IncomingHttpHeaders) => void;
}

/** Canonical events, batched per upstream read (a batch may be empty: it still proves activity). */
export type EventBatches = AsyncIterable<CanonicalEvent[]>;

/**
 * The adapter contract. `stream` resolves once the upstream accepted the request (2xx) and
 * rejects with a GatewayError when it did not; `complete` is the non-streaming call.
 * A provider never sees client wire formats: it takes the canonical request, gives events.
 */
export interface ProviderAdapter {
  readonly name: string;
  stream(request: CanonicalRequest, model: string, ctx: CallContext): Promise<EventBatches>;
  complete(request: CanonicalRequest, model: string, ctx: CallContext): Promise<CanonicalEvent[]>;
  /** Models this provider is known to serve, for GET /v1/models (may be empty). */
  listModels(): string[];
  /** Present when the upstream implements /v1/responses itself and the config asks to relay it. */
  responses?: ResponsesRelay;
}

/** An upstream Responses frame as sent, or the failure of the upstream stream itself. */
export type RelayItem = { frame: SseFrame } | { error: GatewayError };

export interface ResponsesRelay {
  stream(body: Record<string, unknown>, model: string, ctx: CallContext): Promise<AsyncIterable<RelayItem[]>>;
  complete(body: Record<string, unknown>, model: string, ctx: CallContext): Promise<Record<string, unknown>>;
}

/** A push decoder from upstream bytes to canonical events; a bad chunk is an error event, never a throw. */
export interface StreamDecoder<T = CanonicalEvent> {
  push(bytes: Uint8Array): T[];
  end(): T[];
}

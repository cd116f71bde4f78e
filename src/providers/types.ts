import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import type { ChatRequest } from '../protocol/openai-chat/request-schema.ts';

export interface CallContext {
  signal: AbortSignal;
  requestId: string;
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
  stream(request: ChatRequest, model: string, ctx: CallContext): Promise<EventBatches>;
  complete(request: ChatRequest, model: string, ctx: CallContext): Promise<CanonicalEvent[]>;
  /** Models this provider is known to serve, for GET /v1/models (may be empty). */
  listModels(): string[];
}

/** A push decoder from upstream bytes to canonical events; a bad chunk is an error event, never a throw. */
export interface StreamDecoder {
  push(bytes: Uint8Array): CanonicalEvent[];
  end(): CanonicalEvent[];
}

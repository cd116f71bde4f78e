import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import type { SseFrame } from '../protocol/sse/parse-upstream.ts';
import type { EmbeddingRequest } from '../protocol/canonical/embedding-request.ts';
import type { BatchApi } from './batch-api.ts';
import type { UpstreamResponse } from '../upstream/http-client.ts';

export interface CallContext {
  signal: AbortSignal;
  requestId: string;
  /** Told the upstream's response headers as soon as they arrive, whatever the status (its request id). */
  onResponse?: (headers: IncomingHttpHeaders) => void;
  /** The upstream attempt's trace context (`traceparent`), sent with the upstream request; absent when tracing is off. */
  traceHeaders?: Record<string, string>;
  /** prompt_cache_key, user or session: a provider with a key pool sends the same affinity with the same key. */
  affinity?: string;
  /** A provider with a key pool names the key (its label) each try goes out with. */
  onProviderKey?: (provider: string, label: string) => void;
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
  /**
   * The upstream's first stream event reports the prompt's input tokens (Anthropic's
   * message_start): the accounting profile's usage_start waits for it instead of counting.
   */
  readonly reportsInputFirst?: boolean;
  /** Present when the upstream implements /v1/responses itself and the config asks to relay it. */
  responses?: ResponsesRelay;
  /** Present when the upstream speaks Anthropic's Messages API itself: POST /v1/messages is relayed to it. */
  messages?: MessagesRelay;
  /** Which models `messages` relays, where only some speak the Messages API (Claude on Vertex AI); absent: all. */
  relaysMessages?(model: string): boolean;
  /** The prompt's tokens as the provider counts them, where it has an endpoint for it (Gemini's countTokens). */
  countTokens?(request: CanonicalRequest, model: string, ctx: CallContext): Promise<number>;
  /** POST /v1/embeddings, where the provider has embedding models (absent: the surface answers 400). */
  embed?(request: EmbeddingRequest, model: string, ctx: CallContext): Promise<EmbeddingResult>;
  /** The upstream's Files and Batch API, or its Message Batches (src/surfaces/files, src/surfaces/batches); absent: none. */
  batches?: BatchApi;
  /** OpenAI's images and audio endpoints, where the upstream serves them itself (absent: those surfaces answer 400). */
  media?: MediaApi;
  /** OpenAI's Realtime API over a WebSocket, where the upstream serves it (absent: GET /v1/realtime answers 400). */
  realtime?: RealtimeApi;
}

/** Where an upstream's Realtime WebSocket is, and the headers (its credentials) it is opened with. */
export interface RealtimeConnection {
  /** A `ws:` or `wss:` URL with the upstream's model in it. */
  url: string;
  headers: Record<string, string>;
}

/**
 * An upstream's own Realtime API (src/surfaces/realtime opens and relays the socket): the provider
 * only knows where it is and with which key, never the client's.
 */
export interface RealtimeApi {
  connection(model: string): Promise<RealtimeConnection>;
}

/** The OpenAI paths of the media endpoints, as they follow an OpenAI-compatible base URL. */
export type MediaPath = 'images/generations' | 'images/edits' | 'audio/transcriptions' | 'audio/translations' | 'audio/speech';

/**
 * One media call: the client's body as it came (a JSON object, or a multipart form with its
 * files), which the provider sends under its own model name, and what the client accepts back.
 */
export interface MediaCall {
  path: MediaPath;
  body: { json: Record<string, unknown> } | { form: FormData };
  /** `text/event-stream` for a streamed call, else the answer's type (`application/json`; any type for audio). */
  accept: string;
}

/**
 * An upstream's own images and audio API. `send` resolves with the upstream's 2xx response, its
 * body unread (a JSON answer, an SSE stream, audio bytes), and rejects with the provider's
 * GatewayError otherwise. The surface reads the body: the provider only knows where to send it.
 */
export interface MediaApi {
  send(call: MediaCall, model: string, ctx: CallContext): Promise<UpstreamResponse>;
}

/** An OpenAI embeddings request, validated (src/surfaces/embeddings). */
export interface EmbeddingResult {
  /** One per input, in input order: floats, or base64 little-endian float32 as the upstream encoded them. */
  embeddings: (number[] | string)[];
  /** The input's tokens as the provider counted them; absent when it does not say (sluice counts them). */
  inputTokens?: number;
}

/**
 * A relayed Messages stream: each read's text exactly as it came (the client gets those bytes),
 * then, frame by frame, what the frame opened or closed (`edge`) and the canonical events decoded
 * from it (for the accountant; an error among them that the upstream sent as an `event: error`
 * frame is `told`: the client already has it).
 */
export type MessagesRelayItem = { text: string } | { edge: MessagesEdge } | { event: CanonicalEvent; told?: boolean };

/**
 * A relayed frame that opens or closes the message or one of its content blocks, as the SSE parser
 * and the frame's JSON said: what a relay surface follows to end a message its budget stops.
 */
export interface MessagesEdge {
  type: 'message_start' | 'content_block_start' | 'content_block_stop' | 'message_stop';
  /** The content block's index (content_block_start and _stop). */
  index: number;
}

export interface MessagesRelay {
  stream(body: Record<string, unknown>, model: string, ctx: RelayCallContext): Promise<AsyncIterable<MessagesRelayItem[]>>;
  /** The message as Anthropic sent it, and its canonical events (for the accountant). */
  complete(
    body: Record<string, unknown>,
    model: string,
    ctx: RelayCallContext,
  ): Promise<{ message: Record<string, unknown>; events: CanonicalEvent[] }>;
  /** POST /v1/messages/count_tokens upstream: its `input_tokens`. */
  countTokens(body: Record<string, unknown>, model: string, ctx: RelayCallContext): Promise<number>;
}

/** A relayed call also carries the client's `anthropic-beta` header (features such as 1h caching). */
export interface RelayCallContext extends CallContext {
  beta?: string;
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

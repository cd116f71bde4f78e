import { errors } from '../../errors/catalog.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { createSseFramer } from '../../protocol/sse/parse-upstream.ts';
import type { UpstreamClient, UpstreamRequest } from '../../upstream/http-client.ts';
import type { MapError } from '../embed-call.ts';
import { readText } from '../http-provider.ts';
import { checkModelId, modelIdRules } from '../model-id.ts';
import type { MessagesEdge, MessagesRelay, MessagesRelayItem, RelayCallContext, StreamDecoder } from '../types.ts';
import { ANTHROPIC_VERSION, type AnthropicTarget, messagesHeaders } from './build-request.ts';
import { decodeAnthropicResponse } from './decode-response.ts';
import { createAnthropicFrameDecoder } from './decode-stream.ts';
import type { AnthropicStreamPayload } from './payload-schema.ts';
import { mapAnthropicError, PROVIDER } from './map-error.ts';

/** A relayed call: the Messages API's, or its token count. */
export type MessagesCall = 'messages' | 'count_tokens';

/**
 * Where relayed Messages calls go: Anthropic's own API, or a platform that hosts Claude (Vertex
 * AI). `place` makes the upstream request of a call from its body (the upstream model and, for a
 * streamed call, `stream: true` in it) and the client's `anthropic-beta` header, if any.
 */
export interface MessagesEndpoint {
  provider: string;
  place(
    call: MessagesCall,
    body: Record<string, unknown>,
    stream: boolean,
    beta: string | undefined,
  ): UpstreamRequest | Promise<UpstreamRequest>;
  mapError: MapError;
}

/** Anthropic's API: `{base}/v1/messages` (and `/count_tokens`), with its version and key headers. */
export function anthropicEndpoint(target: AnthropicTarget): MessagesEndpoint {
  const base = target.baseUrl.replace(/\/+$/, '');
  return {
    provider: PROVIDER,
    mapError: mapAnthropicError,
    place(call, body, stream, beta) {
      const headers = withBeta({ ...messagesHeaders(stream), 'anthropic-version': ANTHROPIC_VERSION, ...target.headers }, beta);
      if (target.apiKey) headers['x-api-key'] = target.apiKey;
      const path = call === 'messages' ? '/v1/messages' : '/v1/messages/count_tokens';
      return { url: `${base}${path}`, headers, body: JSON.stringify(body) };
    },
  };
}

/** The client's betas join the config's (both are comma-separated lists Anthropic accepts). */
export function withBeta(headers: Record<string, string>, beta: string | undefined): Record<string, string> {
  if (beta) headers['anthropic-beta'] = headers['anthropic-beta'] ? `${headers['anthropic-beta']},${beta}` : beta;
  return headers;
}

/**
 * POST /v1/messages (and count_tokens) relayed to Anthropic (or Claude on a platform): the
 * client's body with the upstream model name, and the stream's bytes back as they came, so prompt
 * caching, betas and block types sluice does not know keep working. The frames are still decoded
 * alongside, for accounting.
 */
export function createMessagesRelay(endpoint: MessagesEndpoint, client: UpstreamClient): MessagesRelay {
  const { provider } = endpoint;

  async function send(call: MessagesCall, body: Record<string, unknown>, stream: boolean, ctx: RelayCallContext) {
    const request = await endpoint.place(call, body, stream, ctx.beta);
    const res = await client.send(provider, { ...request, headers: { ...request.headers, ...ctx.traceHeaders } }, ctx.signal);
    ctx.onResponse?.(res.headers);
    if (res.statusCode < 200 || res.statusCode >= 300) {
      throw endpoint.mapError(res.statusCode, res.headers, await readText(res.body, provider, ctx.signal));
    }
    return res;
  }

  async function json(res: Awaited<ReturnType<typeof send>>, ctx: RelayCallContext): Promise<Record<string, unknown>> {
    const text = await readText(res.body, provider, ctx.signal);
    try {
      const value: unknown = JSON.parse(text);
      if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // reported below
    }
    throw errors.malformed(provider, `response body is not a JSON object: ${text.slice(0, 200)}`);
  }

  return {
    async stream(body, model, ctx) {
      checkModelId(provider, model, modelIdRules.body);
      const res = await send('messages', { ...body, model, stream: true }, true, ctx);
      return res.body.decode(createMessagesRelayDecoder());
    },
    async complete(body, model, ctx) {
      checkModelId(provider, model, modelIdRules.body);
      const { stream: _stream, ...rest } = body;
      const message = await json(await send('messages', { ...rest, model }, false, ctx), ctx);
      return { message, events: accountedEvents(message) };
    },
    async countTokens(body, model, ctx) {
      checkModelId(provider, model, modelIdRules.body);
      const answer = await json(await send('count_tokens', { ...body, model }, false, ctx), ctx);
      const count = answer.input_tokens;
      if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) {
        throw errors.malformed(provider, 'count_tokens answered without an input_tokens count.');
      }
      return count;
    },
  };
}

/**
 * What the accountant reads from a relayed message. The client gets the message as it came even
 * when sluice cannot read it (a shape newer than its schema): the usage is then counted locally.
 */
function accountedEvents(message: Record<string, unknown>): CanonicalEvent[] {
  try {
    return decodeAnthropicResponse(message);
  } catch {
    return [];
  }
}

/** The frames that open and close the message and its content blocks. */
const EDGES: ReadonlySet<string> = new Set(['message_start', 'content_block_start', 'content_block_stop', 'message_stop']);

/** What a frame's payload opens or closes, if anything (its type as the payload or the `event:` line says). */
function edgeOf(payload: AnthropicStreamPayload): MessagesEdge | undefined {
  const type = payload.type;
  if (typeof type !== 'string' || !EDGES.has(type)) return undefined;
  return { type: type as MessagesEdge['type'], index: payload.index ?? 0 };
}

/**
 * Each read: its whole frames' text as it came, then, per frame, what it opened or closed and what
 * it means as canonical events.
 * A frame cut by a read boundary waits for its end: the client gets whole frames (a resumable
 * stream's are counted, and may carry `id:` lines, sse-writer.ts). An `event: error` the upstream sent is marked
 * told (relayed already); a stream that breaks is not.
 */
export function createMessagesRelayDecoder(): StreamDecoder<MessagesRelayItem> {
  const text = new TextDecoder('utf-8');
  let out: MessagesRelayItem[] = [];
  const frames = createAnthropicFrameDecoder((payload) => {
    const edge = edgeOf(payload);
    if (edge) out.push({ edge });
  });
  let pending = '';
  let broken = false;
  const framer = createSseFramer({
    onFrame: (frame) => {
      const events: CanonicalEvent[] = [];
      frames.frame(frame, events);
      const told = frame.event === 'error';
      for (const event of events) out.push(told && event.type === 'error' ? { event, told } : { event });
    },
    onInvalid: (detail) => {
      if (broken) return;
      broken = true;
      out.push({ event: { type: 'error', error: errors.malformed(PROVIDER, detail) } });
    },
  });
  const take = (read: string): MessagesRelayItem[] => {
    const items = read ? [{ text: read }, ...out] : out;
    out = [];
    return items;
  };
  return {
    push(bytes) {
      pending += text.decode(bytes, { stream: true });
      const cut = frameEnd(pending);
      const whole = pending.slice(0, cut);
      pending = pending.slice(cut);
      if (!broken) framer.push(bytes);
      return take(whole);
    },
    end() {
      const rest = pending + text.decode();
      pending = '';
      if (!broken) framer.end();
      return take(rest);
    },
  };
}

/** Where the last whole frame of `text` ends (a blank line, in any of SSE's line endings); 0 for none. */
function frameEnd(text: string): number {
  let end = 0;
  for (const blank of ['\n\n', '\r\n\r\n', '\r\r']) {
    const at = text.lastIndexOf(blank);
    if (at !== -1) end = Math.max(end, at + blank.length);
  }
  return end;
}

import { errors } from '../../errors/catalog.ts';
import { createSseFramer } from '../../protocol/sse/parse-upstream.ts';
import type { UpstreamClient, UpstreamRequest } from '../../upstream/http-client.ts';
import type { MapError } from '../embed-call.ts';
import { readText } from '../http-provider.ts';
import { checkModelId, modelIdRules } from '../model-id.ts';
import type { CallContext, RelayItem, ResponsesRelay, StreamDecoder } from '../types.ts';
import { type OpenAICompatibleTarget, openAIHeaders } from './build-request.ts';
import { mapOpenAICompatibleError } from './map-error.ts';

/**
 * Where a Responses call goes: the upstream request for its body (the upstream model and `stream`
 * already in it). Azure OpenAI places it at its own URL, with its own credentials.
 */
export type PlaceResponses = (body: Record<string, unknown>, stream: boolean) => UpstreamRequest | Promise<UpstreamRequest>;

/** `{base}/responses` with the server's key: OpenAI and the servers that copy its API. */
export function responsesAt(target: OpenAICompatibleTarget): PlaceResponses {
  const url = `${target.baseUrl.replace(/\/+$/, '')}/responses`;
  return (body, stream) => ({ url, headers: openAIHeaders(target, stream), body: JSON.stringify(body) });
}

/**
 * For upstreams that implement the Responses API themselves (OpenAI, xAI, DeepSeek, OpenRouter,
 * Azure OpenAI): the client's body goes upstream with the upstream model name, and the events come
 * back as sent. Only framing is checked here; the surface reads usage from the terminal event.
 */
export function createResponsesRelay(
  name: string,
  place: PlaceResponses,
  client: UpstreamClient,
  mapError: MapError = (status, headers, text) => mapOpenAICompatibleError(name, status, headers, text),
): ResponsesRelay {
  async function send(body: Record<string, unknown>, model: string, stream: boolean, ctx: CallContext) {
    const { signal } = ctx;
    checkModelId(name, model, modelIdRules.body);
    const request = await place({ ...body, model, stream }, stream);
    const res = await client.send(name, { ...request, headers: { ...request.headers, ...ctx.traceHeaders } }, signal);
    ctx.onResponse?.(res.headers);
    if (res.statusCode < 200 || res.statusCode >= 300) {
      throw mapError(res.statusCode, res.headers, await readText(res.body, name, signal));
    }
    return res;
  }

  return {
    async stream(body, model, ctx) {
      const res = await send(body, model, true, ctx);
      return res.body.decode(frameDecoder(name));
    },
    async complete(body, model, ctx) {
      const res = await send(body, model, false, ctx);
      const text = await readText(res.body, name, ctx.signal);
      try {
        return JSON.parse(text) as Record<string, unknown>;
      } catch {
        throw errors.malformed(name, `response body is not JSON: ${text.slice(0, 200)}`);
      }
    },
  };
}

function frameDecoder(provider: string): StreamDecoder<RelayItem> {
  let out: RelayItem[] = [];
  const framer = createSseFramer({
    onFrame: (frame) => out.push({ frame }),
    onInvalid: (detail) => out.push({ error: errors.malformed(provider, detail) }),
  });
  const take = () => {
    const items = out;
    out = [];
    return items;
  };
  return {
    push(bytes) {
      framer.push(bytes);
      return take();
    },
    end() {
      framer.end();
      return take();
    },
  };
}

import { errors } from '../../errors/catalog.ts';
import { createSseFramer } from '../../protocol/sse/parse-upstream.ts';
import type { UpstreamClient } from '../../upstream/http-client.ts';
import { readText } from '../http-provider.ts';
import { checkModelId, modelIdRules } from '../model-id.ts';
import type { CallContext, RelayItem, ResponsesRelay, StreamDecoder } from '../types.ts';
import type { OpenAICompatibleTarget } from './build-request.ts';
import { mapOpenAICompatibleError } from './map-error.ts';

/**
 * For upstreams that implement the Responses API themselves (OpenAI, xAI, DeepSeek, OpenRouter):
 * the client's body goes to `{base}/responses` with the upstream model name, and the events come
 * back as sent. Only framing is checked here; the surface reads usage from the terminal event.
 */
export function createResponsesRelay(name: string, target: OpenAICompatibleTarget, client: UpstreamClient): ResponsesRelay {
  const url = `${target.baseUrl.replace(/\/+$/, '')}/responses`;
  const headers = (stream: boolean): Record<string, string> => ({
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
    ...target.headers,
    ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}),
  });

  async function send(body: Record<string, unknown>, model: string, stream: boolean, ctx: CallContext) {
    const { signal } = ctx;
    checkModelId(name, model, modelIdRules.body);
    const res = await client.send(
      name,
      { url, headers: { ...headers(stream), ...ctx.traceHeaders }, body: JSON.stringify({ ...body, model, stream }) },
      signal,
    );
    ctx.onResponse?.(res.headers);
    if (res.statusCode < 200 || res.statusCode >= 300) {
      throw mapOpenAICompatibleError(name, res.statusCode, res.headers, await readText(res.body, name, signal));
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

import type { IncomingHttpHeaders } from 'node:http';
import { errors } from '../errors/catalog.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import { type UpstreamClient, type UpstreamRequest, type UpstreamResponse, upstreamFailure } from '../upstream/http-client.ts';
import type { UpstreamBody } from '../upstream/upstream-body.ts';
import { checkModelId, modelIdRules } from './model-id.ts';
import type { CallContext, ProviderAdapter, StreamDecoder } from './types.ts';

/** The pure pieces a provider over HTTP is made of; `createHttpProvider` adds the effects. */
export interface HttpProviderSpec {
  name: string;
  /** May be async: a request signature (AWS SigV4) is computed over the finished request. */
  buildRequest(request: CanonicalRequest, model: string, stream: boolean): UpstreamRequest | Promise<UpstreamRequest>;
  /** May be async: a decoder whose library is loaded on first use (Bedrock's eventstream codec). */
  createStreamDecoder(): StreamDecoder | Promise<StreamDecoder>;
  decodeResponse(body: unknown): CanonicalEvent[];
  mapError(status: number, headers: IncomingHttpHeaders, body: string): GatewayError;
  models?: string[];
}

const MAX_ERROR_BODY = 1024 * 1024;

export function createHttpProvider(spec: HttpProviderSpec, client: UpstreamClient): ProviderAdapter {
  async function open(request: CanonicalRequest, model: string, stream: boolean, ctx: CallContext) {
    // Every provider's ids are held to the body rule; those that put the id in a URL check more in buildRequest.
    checkModelId(spec.name, model, modelIdRules.body);
    const res = await client.send(spec.name, withTraceHeaders(await spec.buildRequest(request, model, stream), ctx), ctx.signal);
    ctx.onResponse?.(res.headers as IncomingHttpHeaders);
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const text = await readText(res.body, spec.name, ctx.signal);
      throw spec.mapError(res.statusCode, res.headers as IncomingHttpHeaders, text);
    }
    return res;
  }

  return {
    name: spec.name,
    listModels: () => spec.models ?? [],
    async stream(request, model, ctx) {
      const res = await open(request, model, true, ctx);
      const contentType = String(res.headers['content-type'] ?? '');
      // A server that ignored `stream: true` (or put an error in a 200 JSON body) is still served.
      if (contentType.includes('application/json')) {
        const events = await readJsonEvents(res, spec, ctx.signal);
        return (async function* () {
          yield events;
        })();
      }
      return res.body.decode(await spec.createStreamDecoder());
    },
    async complete(request, model, ctx) {
      const res = await open(request, model, false, ctx);
      return readJsonEvents(res, spec, ctx.signal);
    },
  };
}

/** The attempt's trace context goes upstream with the request (outside any request signature, which names its headers). */
export function withTraceHeaders<R extends Pick<UpstreamRequest, 'headers'>>(request: R, ctx: CallContext): R {
  return ctx.traceHeaders ? { ...request, headers: { ...request.headers, ...ctx.traceHeaders } } : request;
}

async function readJsonEvents(res: UpstreamResponse, spec: HttpProviderSpec, signal: AbortSignal): Promise<CanonicalEvent[]> {
  const text = await readText(res.body, spec.name, signal);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw errors.malformed(spec.name, `response body is not JSON: ${text.slice(0, 200)}`);
  }
  return spec.decodeResponse(json);
}

/** A whole (error or JSON) body as text, capped. */
export async function readText(body: UpstreamBody, provider: string, signal: AbortSignal): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > MAX_ERROR_BODY) break;
      parts.push(chunk as Buffer);
    }
  } catch (err) {
    throw upstreamFailure(provider, err, signal);
  } finally {
    if (!body.destroyed) body.destroy();
  }
  return Buffer.concat(parts).toString('utf8');
}

import type { IncomingHttpHeaders } from 'node:http';
import { errors } from '../errors/catalog.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { UpstreamClient, UpstreamRequest } from '../upstream/http-client.ts';
import { readText, withTraceHeaders } from './http-provider.ts';
import type { CallContext } from './types.ts';

export type MapError = (status: number, headers: IncomingHttpHeaders, text: string) => GatewayError;

/** One embeddings call upstream: the JSON answer and its headers, or the provider's error thrown. */
export async function callEmbeddingsUpstream(
  provider: string,
  client: UpstreamClient,
  request: UpstreamRequest,
  ctx: CallContext,
  mapError: MapError,
): Promise<{ json: unknown; headers: IncomingHttpHeaders }> {
  const res = await client.send(provider, withTraceHeaders(request, ctx), ctx.signal);
  ctx.onResponse?.(res.headers);
  const text = await readText(res.body, provider, ctx.signal);
  if (res.statusCode < 200 || res.statusCode >= 300) throw mapError(res.statusCode, res.headers, text);
  try {
    return { json: JSON.parse(text), headers: res.headers };
  } catch {
    throw errors.malformed(provider, `embeddings response body is not JSON: ${text.slice(0, 200)}`);
  }
}

/** A vector from an upstream: an array of finite numbers, else a 502 naming where it was. */
export function floatVector(provider: string, value: unknown, where: string): number[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'number' && Number.isFinite(v))) {
    throw errors.malformed(provider, `${where} is not an array of numbers`);
  }
  return value as number[];
}

/** A token count from an upstream, or undefined when absent or not a count. */
export function tokenCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

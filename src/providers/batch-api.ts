import type { IncomingHttpHeaders } from 'node:http';
import { errors } from '../errors/catalog.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { UpstreamBody } from '../upstream/upstream-body.ts';
import { type UpstreamClient, upstreamFailure } from '../upstream/http-client.ts';
import type { UpstreamHeaders } from './upstream-headers.ts';

/**
 * Which batch API an upstream speaks: `openai` (OpenAI's Files and Batch API, served by
 * OpenAI-compatible servers) or `anthropic` (Anthropic's Message Batches).
 */
export type BatchApiKind = 'openai' | 'anthropic';

/** One call of a batch API: a path of that API (`/files`, `/batches/{id}/cancel`, `/messages/batches`), its query, its body. */
export interface BatchCall {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  search?: URLSearchParams;
  /** The client's content type of `body` (a multipart upload's boundary kept). */
  contentType?: string;
  body?: string | Uint8Array;
  /** The client's `anthropic-beta` header, passed on. */
  beta?: string;
}

/** The upstream's answer, read whole (up to the limit the caller gives). */
export interface BatchAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * The provider seam of the Files and Batch APIs: where a path of the API lives upstream and how
 * the upstream is authenticated are the provider's alone (`url`), so that a provider whose URLs
 * differ (Azure's deployments and `api-version`) supplies its own and the surfaces stay the same.
 * `send` calls it; `mapError` reads its error bodies.
 */
export interface BatchApi {
  readonly kind: BatchApiKind;
  /** The upstream URL of a path of the API (with the query). */
  url(path: string, search?: URLSearchParams): string;
  send(call: BatchCall, signal: AbortSignal, maxBytes: number): Promise<BatchAnswer>;
  mapError(status: number, headers: IncomingHttpHeaders, text: string): GatewayError;
}

export interface BatchApiSpec {
  provider: string;
  kind: BatchApiKind;
  url: (path: string, search?: URLSearchParams) => string;
  /** The upstream's authentication and fixed headers (the key or a token, `anthropic-version`, the config's). */
  headers: UpstreamHeaders;
  mapError: BatchApi['mapError'];
}

/** A BatchApi over the provider's upstream client. */
export function createBatchApi(spec: BatchApiSpec, client: UpstreamClient): BatchApi {
  return {
    kind: spec.kind,
    url: spec.url,
    mapError: spec.mapError,
    async send(call, signal, maxBytes) {
      const headers: Record<string, string> = { accept: 'application/json', ...(await spec.headers()) };
      if (call.contentType) headers['content-type'] = call.contentType;
      if (call.beta) headers['anthropic-beta'] = call.beta;
      const res = await client.send(
        spec.provider,
        {
          url: spec.url(call.path, call.search),
          method: call.method,
          headers,
          ...(typeof call.body === 'string' ? { body: call.body } : { bytes: call.body }),
        },
        signal,
      );
      const body = await readCapped(res.body, spec.provider, signal, maxBytes);
      return { status: res.statusCode, headers: res.headers, body };
    },
  };
}

/** `base` (no trailing slash) + path + query. */
export function joinUrl(base: string, path: string, search?: URLSearchParams): string {
  const query = search && search.size > 0 ? `?${search.toString()}` : '';
  return `${base.replace(/\/+$/, '')}${path}${query}`;
}

/** A whole body, refused past `maxBytes` (a results file larger than the gateway keeps in memory). */
async function readCapped(body: UpstreamBody, provider: string, signal: AbortSignal, maxBytes: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += chunk.length;
      if (size > maxBytes) throw errors.malformed(provider, `the answer is larger than batches.max_download_bytes (${maxBytes})`);
      parts.push(chunk);
    }
  } catch (err) {
    throw upstreamFailure(provider, err, signal);
  } finally {
    if (!body.destroyed) body.destroy();
  }
  return Buffer.concat(parts);
}

import type { UpstreamClient, UpstreamRequest, UpstreamUpload } from '../upstream/http-client.ts';
import type { MapError } from './embed-call.ts';
import { readText, withTraceHeaders } from './http-provider.ts';
import { checkModelId, modelIdRules } from './model-id.ts';
import type { MediaApi, MediaCall, MediaPath } from './types.ts';
import type { UpstreamHeaders } from './upstream-headers.ts';

/**
 * Where and how a provider's media calls go. `urlFor` is the seam a provider with its own URL
 * scheme plugs into: an OpenAI-compatible server appends the path to its base URL, an Azure
 * OpenAI resource puts the model (its deployment) and its `api-version` in the URL.
 */
export interface MediaTarget {
  urlFor(path: MediaPath, model: string): string;
  /** Its credentials and fixed headers, asked for on every call. */
  headers: UpstreamHeaders;
  mapError: MapError;
}

/**
 * A provider's `media`: the client's body under the upstream's model name, sent as JSON or as
 * the multipart form it came as (its files relayed as they are), and the upstream's 2xx response
 * handed back unread; a non-2xx is the provider's error.
 */
export function createMediaApi(provider: string, client: UpstreamClient, target: MediaTarget): MediaApi {
  return {
    async send(call, model, ctx) {
      checkModelId(provider, model, modelIdRules.body);
      const request = withTraceHeaders(await mediaRequest(call, model, target), ctx);
      const res = await client.send(provider, request, ctx.signal);
      ctx.onResponse?.(res.headers);
      if (res.statusCode < 200 || res.statusCode >= 300) {
        throw target.mapError(res.statusCode, res.headers, await readText(res.body, provider, ctx.signal));
      }
      return res;
    },
  };
}

async function mediaRequest(call: MediaCall, model: string, target: MediaTarget): Promise<UpstreamRequest | UpstreamUpload> {
  const url = target.urlFor(call.path, model);
  const headers = { ...(await target.headers()), accept: call.accept };
  if ('json' in call.body) {
    return {
      url,
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ ...call.body.json, model }),
    };
  }
  const { bytes, contentType } = await encodeForm(call.body.form, model);
  return { url, headers: { ...headers, 'content-type': contentType }, body: bytes };
}

/**
 * The form with the upstream's model name, as multipart bytes and their Content-Type (with its
 * boundary): Node's own encoder (a Response over the FormData). A copy, so that each candidate of
 * a route gets its own model name.
 */
export async function encodeForm(form: FormData, model: string): Promise<{ bytes: Uint8Array; contentType: string }> {
  const copy = new FormData();
  for (const [name, value] of form) copy.append(name, value);
  copy.set('model', model);
  const encoded = new Response(copy);
  const contentType = encoded.headers.get('content-type') ?? 'multipart/form-data';
  return { bytes: new Uint8Array(await encoded.arrayBuffer()), contentType };
}

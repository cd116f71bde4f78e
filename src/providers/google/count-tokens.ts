import { errors } from '../../errors/catalog.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import type { UpstreamClient } from '../../upstream/http-client.ts';
import { readText } from '../http-provider.ts';
import type { CallContext } from '../types.ts';
import { buildGoogleRequest, type GoogleTarget } from './build-request.ts';
import { mapGoogleError } from './map-error.ts';

/**
 * The prompt's tokens as Gemini counts them: `models/{id}:countTokens` with the request it would
 * generate from (`generateContentRequest`: the contents, system instruction and tools all count).
 * Counting changes no answer, so parameters Gemini cannot honour are left out rather than refused.
 */
export async function countGeminiTokens(
  request: CanonicalRequest,
  model: string,
  ctx: CallContext,
  target: GoogleTarget,
  client: UpstreamClient,
): Promise<number> {
  const built = buildGoogleRequest(request, model, false, { ...target, dropParams: true });
  const at = built.url.lastIndexOf(':generateContent');
  const url = `${built.url.slice(0, at)}:countTokens`;
  // The resource is the URL's last path segments (`models/{id}` or `tunedModels/{id}`), as encoded there.
  const resource = decodeURIComponent(url.slice(0, at).split('/').slice(-2).join('/'));
  const body = JSON.stringify({ generateContentRequest: { model: resource, ...(JSON.parse(built.body ?? '{}') as object) } });
  const res = await client.send(
    target.name,
    { url, headers: { ...built.headers, accept: 'application/json' }, body },
    ctx.signal,
  );
  ctx.onResponse?.(res.headers);
  const text = await readText(res.body, target.name, ctx.signal);
  if (res.statusCode < 200 || res.statusCode >= 300) throw mapGoogleError(target.name, res.statusCode, res.headers, text);
  let total: unknown;
  try {
    total = (JSON.parse(text) as { totalTokens?: unknown }).totalTokens;
  } catch {
    total = undefined;
  }
  if (typeof total !== 'number' || !Number.isInteger(total) || total < 0) {
    throw errors.malformed(target.name, `countTokens answered without a totalTokens count: ${text.slice(0, 200)}`);
  }
  return total;
}

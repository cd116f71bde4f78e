import type { UpstreamClient } from '../../upstream/http-client.ts';

export interface ModelListTarget {
  name: string;
  baseUrl: string;
  apiKey: string | undefined;
  headers: Record<string, string>;
  /** The config's static `models`: listed always, and alone when the upstream cannot answer. */
  models: string[];
}

export interface ModelListTimings {
  /** How long a successful upstream list is reused. */
  ttlMs: number;
  /** How long a failed attempt is remembered, so a down upstream costs one timeout per period, not per call. */
  failureTtlMs: number;
  /** The whole upstream call, headers and body. */
  timeoutMs: number;
  now?: () => number;
}

/** Five minutes: model catalogues change rarely; 2.5 s: /v1/models must stay quick when an upstream is not. */
export const defaultModelListTimings: ModelListTimings = { ttlMs: 300_000, failureTtlMs: 30_000, timeoutMs: 2_500 };

/** OpenRouter's catalogue with descriptions and prices is a few MiB; anything past this is not a model list. */
const MAX_BODY = 16 * 1024 * 1024;

/**
 * The models an OpenAI-compatible upstream serves, from its own `GET {base_url}/models`, cached.
 * Never rejects: an upstream that is down, slow, or answers something else yields the static
 * `models` of the config (or nothing). Concurrent callers share one upstream request.
 */
export function createModelList(
  target: ModelListTarget,
  client: UpstreamClient,
  timings = defaultModelListTimings,
): () => Promise<string[]> {
  const now = timings.now ?? Date.now;
  let cached: { models: string[]; until: number } | undefined;
  let pending: Promise<string[]> | undefined;

  async function fetchModels(): Promise<string[]> {
    const upstream = await fetchUpstreamIds(target, client, timings.timeoutMs);
    const models = upstream ? [...new Set([...target.models, ...upstream])] : target.models;
    cached = { models, until: now() + (upstream ? timings.ttlMs : timings.failureTtlMs) };
    return models;
  }

  return () => {
    if (cached && now() < cached.until) return Promise.resolve(cached.models);
    pending ??= fetchModels().finally(() => (pending = undefined));
    return pending;
  };
}

/** The upstream's model ids, or undefined when it could not tell us within the timeout. */
async function fetchUpstreamIds(
  target: ModelListTarget,
  client: UpstreamClient,
  timeoutMs: number,
): Promise<string[] | undefined> {
  const headers: Record<string, string> = { accept: 'application/json', ...target.headers };
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  const url = `${target.baseUrl.replace(/\/+$/, '')}/models`;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await client.send(target.name, { url, method: 'GET', headers }, signal);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += chunk.length;
      if (size > MAX_BODY) return undefined; // leaving the loop releases the upstream request
      chunks.push(chunk);
    }
    if (res.statusCode !== 200) return undefined;
    return modelIds(JSON.parse(Buffer.concat(chunks).toString('utf8')));
  } catch {
    return undefined;
  }
}

/** `{data: [{id}]}`, the OpenAI list shape; only the ids are read, any other field may change. */
function modelIds(body: unknown): string[] | undefined {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return undefined;
  return data.flatMap((m) => {
    const id = (m as { id?: unknown } | null)?.id;
    return typeof id === 'string' && id.length > 0 ? [id] : [];
  });
}

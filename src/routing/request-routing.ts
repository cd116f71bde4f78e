import { errors } from '../errors/catalog.ts';

/** More fallbacks than this is a mistake, not a plan (OpenRouter caps `models` too). */
const MAX_FALLBACKS = 8;

export interface RequestRouting {
  /** The request's own fallbacks, tried after the model's targets. */
  fallbacks: string[];
  /** What a sticky route hashes: prompt_cache_key, else user. */
  stickyKey: string | undefined;
}

/**
 * What a request body says about its routing: OpenRouter's `models` (the fallbacks, in order;
 * a 400 naming the field when it is not a short list of names) and the stickiness key.
 */
export function readRequestRouting(body: Record<string, unknown>): RequestRouting {
  const models = body.models;
  let fallbacks: string[] = [];
  if (models !== undefined && models !== null) {
    if (!Array.isArray(models) || models.length > MAX_FALLBACKS || !models.every((m) => typeof m === 'string' && m !== '')) {
      throw errors.invalidRequest(`'models' must be a list of at most ${MAX_FALLBACKS} model names.`, 'models');
    }
    fallbacks = models as string[];
  }
  const key = body.prompt_cache_key ?? body.user;
  return { fallbacks, stickyKey: typeof key === 'string' && key !== '' ? key : undefined };
}

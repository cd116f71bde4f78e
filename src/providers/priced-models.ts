import { genaiPrices } from '../accounting/genai-prices.ts';

/**
 * The native providers' ids in @pydantic/genai-prices (the pricing registry sluice already
 * ships): their APIs have no model list sluice could ask with every kind of credential, so
 * GET /v1/models lists the models the registry prices for them.
 */
const REGISTRY_PROVIDER: Record<string, string> = { anthropic: 'anthropic', google: 'google', bedrock: 'aws' };

/**
 * The registry's "google" entry is Vertex AI, which also sells partner models (Claude) that the
 * Gemini API does not serve.
 */
const NOT_SERVED: Record<string, (id: string) => boolean> = { google: (id) => id.startsWith('claude-') };

const cache = new Map<string, string[]>();

/** Model ids the pricing registry knows for a native provider (none for any other provider). */
export function pricedModels(provider: string): string[] {
  let models = cache.get(provider);
  if (!models) {
    const registryId = REGISTRY_PROVIDER[provider];
    const entry = registryId ? genaiPrices().findProvider({ providerId: registryId }) : undefined;
    const skip = NOT_SERVED[provider];
    models = (entry?.models ?? []).map((m) => m.id).filter((id) => !skip?.(id));
    cache.set(provider, models);
  }
  return models;
}

/**
 * The pricing registry's id of each provider whose model ids are the registry's own (so a bare
 * `gpt-4o-mini` can be found at `openai`). Wider than REGISTRY_PROVIDER: GET /v1/models asks the
 * OpenAI-compatible ones for their own list instead.
 */
const NAMING_PROVIDER: Record<string, string> = {
  ...REGISTRY_PROVIDER,
  openai: 'openai',
  deepseek: 'deepseek',
  xai: 'x-ai',
  mistral: 'mistral',
  groq: 'groq',
};

const named = new Map<string, ReadonlySet<string>>();

/**
 * Providers whose API takes the names the registry matches to a model (Anthropic's
 * `claude-sonnet-4-20250514`, an id the registry prices as `claude-sonnet-4-0`; OpenAI's dated
 * `gpt-4o-2024-08-06`). Not Bedrock: the registry matches a bare `claude-sonnet-4-20250514` to
 * Bedrock's `anthropic.claude-sonnet-4-20250514-v1:0` for pricing, but Bedrock's API wants its
 * own id, prefix and version included.
 */
const MATCHING_PROVIDER: Record<string, string> = Object.fromEntries(
  Object.entries(NAMING_PROVIDER).filter(([provider]) => provider !== 'bedrock'),
);

/** How many names' matches are remembered: the names come from clients, so the memory is bounded. */
const MATCHES_KEPT = 1_000;
const matches = new Map<string, boolean>();

/**
 * Whether the pricing registry matches `model` to a model of `provider` by its match rules (dated
 * snapshots and other spellings of an id), for a name that is no registry id. A match costs
 * ~50 us, so each (provider, name) is remembered, the oldest forgotten past MATCHES_KEPT.
 */
export function matchesModelId(provider: string, model: string): boolean {
  const registryId = MATCHING_PROVIDER[provider];
  if (!registryId) return false;
  const key = `${provider}/${model}`;
  const known = matches.get(key);
  if (known !== undefined) return known;
  const match = genaiPrices().calcPrice({ input_tokens: 1, output_tokens: 1 }, model, { providerId: registryId });
  const matched = match !== null && !NOT_SERVED[provider]?.(match.model.id);
  if (matches.size >= MATCHES_KEPT) matches.delete(matches.keys().next().value as string);
  matches.set(key, matched);
  return matched;
}

/** Model ids the pricing registry knows `provider` serves under that exact id (bare-name resolution). */
export function knownModelIds(provider: string): ReadonlySet<string> {
  let ids = named.get(provider);
  if (!ids) {
    const registryId = NAMING_PROVIDER[provider];
    const entry = registryId ? genaiPrices().findProvider({ providerId: registryId }) : undefined;
    const skip = NOT_SERVED[provider];
    ids = new Set((entry?.models ?? []).map((m) => m.id).filter((id) => !skip?.(id)));
    named.set(provider, ids);
  }
  return ids;
}

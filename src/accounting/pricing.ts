import type { ModelPrice, Provider } from '@pydantic/genai-prices';
import type { MediaUnits, Usage } from '../protocol/canonical/usage.ts';
import { genaiPrices } from './genai-prices.ts';

/** A price set in the config, per million tokens and per media unit (overrides or adds to the registry). */
export interface PriceOverride {
  input_mtok: number;
  output_mtok: number;
  cache_read_mtok?: number;
  cache_write_mtok?: number;
  /** USD per image made (dall-e's prices are per image). */
  per_image?: number;
  /** USD per minute of audio transcribed or translated (whisper-1's price). */
  per_audio_minute?: number;
  /** USD per million characters spoken (tts-1's price). */
  per_million_characters?: number;
}

export interface Cost {
  costUsd: number;
  priceKnown: boolean;
  /** Where the price came from, for `sluice pricing`. */
  source: 'registry' | 'config' | 'free' | 'unknown';
  price?: ModelPrice | PriceOverride;
  registryModel?: string;
}

/** sluice provider names -> the registry's provider ids (no entry: the registry has none). */
const REGISTRY_PROVIDER: Record<string, string> = {
  openai: 'openai',
  anthropic: 'anthropic',
  google: 'google',
  bedrock: 'aws',
  deepseek: 'deepseek',
  xai: 'x-ai',
  mistral: 'mistral',
  groq: 'groq',
  openrouter: 'openrouter',
  azure: 'azure',
  // The registry's "google" is Vertex AI's price list, Claude included.
  vertex: 'google',
};

/**
 * The config's entries that are another Azure resource or Vertex project under a name of their own
 * (`type: azure` / `vertex`): they are priced as the provider they are an instance of.
 */
export function providerKinds(providers: Record<string, { type?: string }>): Record<string, string> {
  const kinds: Record<string, string> = {};
  for (const [name, entry] of Object.entries(providers)) {
    if (entry.type === 'azure' || entry.type === 'vertex') kinds[name] = entry.type;
  }
  return kinds;
}

/** Providers that cost nothing by construction. */
const FREE = new Set(['mock', 'ollama']);

/**
 * Costs are kept to a ten-billionth of a dollar (1e-10 USD). The registry's arithmetic is binary
 * floating point and leaves noise in the last bits (`0.0036764999999999996` for 0.0036765), which
 * then went into the ledger, the frames and the budgets as it was. The cheapest token priced
 * today costs 2.5e-9 USD (a cache read at $0.0025 per million), so 1e-10 keeps every price
 * exact to its 2-3 significant digits; the rounding moves a request by at most 5e-11 USD, a
 * billion requests by at most 5 cents. Rounded here, once, so that every reader of a cost (the
 * ledger's double precision `cost_usd`, usage_final, the usage chunk, a budget's reservation and
 * spend) has the same number.
 */
export const COST_DECIMALS = 10;
const COST_SCALE = 10 ** COST_DECIMALS;

/** A dollar amount rounded to COST_DECIMALS places, printed without float noise (k / 1e10 is the double nearest that decimal). */
export function roundUsd(usd: number): number {
  return Math.round(usd * COST_SCALE) / COST_SCALE;
}

/**
 * Cost from @pydantic/genai-prices (maintained, offline data with cached-token and tiered
 * arithmetic) plus config overrides. A model with no price costs 0.0 and is flagged; it never
 * blocks a request. Each (provider, model) is resolved once and kept as a one-model provider:
 * calcPrice then costs ~7 us instead of ~48 us (measured here), off the per-chunk path anyway.
 */
export class PricingRegistry {
  private readonly overrides: Map<string, PriceOverride>;
  private readonly resolved = new Map<string, Provider | null>();
  /** Providers named in the config that are another instance of a native one (`azure-eu`: `azure`). */
  private readonly kinds: Map<string, string>;

  constructor(overrides: Record<string, PriceOverride> = {}, kinds: Record<string, string> = {}) {
    this.overrides = new Map(Object.entries(overrides));
    this.kinds = new Map(Object.entries(kinds));
  }

  cost(provider: string, model: string, usage: Usage, at = new Date()): Cost {
    const override = this.overrides.get(`${provider}/${model}`);
    if (override) {
      const units = priceUnits(usage, unitPricesOf(override), overrideBillsTokens(override));
      return {
        costUsd: roundUsd(priceWithOverride(override, usage) + units.usd),
        priceKnown: units.known,
        source: 'config',
        price: override,
      };
    }
    if (FREE.has(provider)) return { costUsd: 0, priceKnown: true, source: 'free' };
    const one = this.lookup(provider, model);
    if (!one) return { costUsd: 0, priceKnown: false, source: 'unknown' };
    const result = genaiPrices().calcPrice(toRegistryUsage(usage), model, { provider: one, timestamp: at });
    if (!result) return { costUsd: 0, priceKnown: false, source: 'unknown' };
    const price = result.model_price as Record<string, unknown>;
    const units = priceUnits(usage, registryUnitPrices(price), price.input_mtok !== undefined || price.output_mtok !== undefined);
    return {
      costUsd: roundUsd(result.total_price + units.usd),
      priceKnown: units.known,
      source: 'registry',
      price: result.model_price,
      registryModel: result.model.id,
    };
  }

  private lookup(provider: string, model: string): Provider | null {
    const key = `${provider}/${model}`;
    const cached = this.resolved.get(key);
    if (cached !== undefined) return cached;
    const providerId = REGISTRY_PROVIDER[this.kinds.get(provider) ?? provider];
    let one: Provider | null = null;
    if (providerId) {
      const { calcPrice, findProvider } = genaiPrices();
      const probe = calcPrice({ input_tokens: 1, output_tokens: 1 }, model, { providerId });
      const full = findProvider({ providerId });
      if (probe && full) one = { ...full, models: [probe.model] };
    }
    this.resolved.set(key, one);
    return one;
  }
}

/**
 * The registry's usage. Cached and cache-written tokens are part of the input tokens; an upstream
 * that reports more of them than input (a hostile or broken usage block) would make the registry
 * throw ("cache_read_tokens cannot exceed input_tokens") at the end of a stream, so they are
 * clamped to the input here: the record keeps what the upstream said, the price stays defined.
 * Audio tokens are part of the input and output too, priced at the model's audio rates where the
 * registry has them (gpt-audio, the realtime models) and as text elsewhere; clamped the same way.
 * Predicted Outputs' accepted and rejected tokens are inside the output tokens already, and billed
 * as output (OpenAI's rule), so they need no key of their own.
 */
function toRegistryUsage(usage: Usage): Record<string, number> {
  const out: Record<string, number> = { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens };
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const written = Math.min(usage.cacheWriteTokens ?? 0, usage.inputTokens - cached);
  if (cached) out.cache_read_tokens = cached;
  if (written) out.cache_write_tokens = written;
  const audioIn = Math.min(usage.audioInputTokens ?? 0, usage.inputTokens - cached - written);
  const audioOut = Math.min(usage.audioOutputTokens ?? 0, usage.outputTokens);
  const imageIn = Math.min(usage.imageInputTokens ?? 0, usage.inputTokens - cached - written - audioIn);
  if (audioIn) out.input_audio_tokens = audioIn;
  if (audioOut) out.output_audio_tokens = audioOut;
  if (imageIn) out.input_image_tokens = imageIn;
  return out;
}

/** USD per unit of each media unit a model has a price for. */
type UnitPrices = { [unit in keyof MediaUnits]?: number };

function unitPricesOf(p: PriceOverride): UnitPrices {
  return {
    images: p.per_image,
    audioSeconds: p.per_audio_minute === undefined ? undefined : p.per_audio_minute / 60,
    characters: p.per_million_characters === undefined ? undefined : p.per_million_characters / 1_000_000,
  };
}

/**
 * The registry prices audio by the hour (`input_audio_hours`: whisper-1, Groq's and Mistral's
 * transcription models) in its tables, but its calculator takes no such usage key: the seconds
 * are priced here, from the same table.
 */
function registryUnitPrices(price: Record<string, unknown>): UnitPrices {
  const hourly = price.input_audio_hours ?? price.audio_hours;
  return { audioSeconds: typeof hourly === 'number' ? hourly / 3600 : undefined };
}

/** A configured price bills tokens unless it prices media units alone (a dall-e's `per_image`). */
function overrideBillsTokens(p: PriceOverride): boolean {
  const perUnit = p.per_image !== undefined || p.per_audio_minute !== undefined || p.per_million_characters !== undefined;
  return !perUnit || p.input_mtok > 0 || p.output_mtok > 0;
}

/**
 * The price of a usage's media units, and whether the request's price is known. A model billed by
 * tokens (gpt-image-1, gpt-4o-transcribe) is priced by them, its units adding only what has a
 * price of its own. A model billed by units alone (dall-e's images, whisper-1's seconds, tts-1's
 * characters) is priced only when the usage has its units and every one of them has a price: a
 * whisper-1 transcript in `text` format reports no duration, so its price is not known.
 */
function priceUnits(usage: Usage, prices: UnitPrices, billsTokens: boolean): { usd: number; known: boolean } {
  const units = usage.units ?? {};
  let usd = 0;
  let counted = 0;
  let unpriced = 0;
  for (const unit of ['images', 'audioSeconds', 'characters'] as const) {
    const count = units[unit];
    if (count === undefined || count <= 0) continue;
    counted++;
    const price = prices[unit];
    if (price === undefined) unpriced++;
    else usd += count * price;
  }
  return { usd, known: billsTokens || (counted > 0 && unpriced === 0) };
}

function priceWithOverride(p: PriceOverride, usage: Usage): number {
  const cached = usage.cachedInputTokens ?? 0;
  const written = usage.cacheWriteTokens ?? 0;
  const fresh = Math.max(0, usage.inputTokens - cached - written);
  return (
    (fresh * p.input_mtok +
      cached * (p.cache_read_mtok ?? p.input_mtok) +
      written * (p.cache_write_mtok ?? p.input_mtok) +
      usage.outputTokens * p.output_mtok) /
    1_000_000
  );
}

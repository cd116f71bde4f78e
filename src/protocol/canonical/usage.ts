/**
 * Usage normalized once, in OpenAI's semantics: `inputTokens` includes cached and cache-write
 * tokens, `outputTokens` includes reasoning tokens. Providers that count differently (Anthropic's
 * input_tokens excludes cache reads; xAI's completion_tokens excludes reasoning) are converted in
 * their decoders, so nothing downstream has to know.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
  /** Audio tokens inside the input and inside the output (OpenAI's audio models): priced apart. */
  audioInputTokens?: number;
  audioOutputTokens?: number;
  /** Image tokens inside the input (an image edit's input images, GPT Image models): priced apart. */
  imageInputTokens?: number;
  /** What a media model bills besides (or instead of) tokens: images made, seconds heard, characters spoken. */
  units?: MediaUnits;
  /**
   * Predicted Outputs (OpenAI's `prediction`): the predicted tokens the answer kept and those it
   * did not. Both are already inside the output tokens (and billed as output); kept to show how
   * well the prediction did.
   */
  acceptedPredictionTokens?: number;
  rejectedPredictionTokens?: number;
  /** `provider` when the upstream reported it, `estimated` when sluice counted locally. */
  source: 'provider' | 'estimated';
  /** The upstream fields that were not token counts (see normalizeTokenCounts): each read as 0. */
  invalid?: string[];
}

/**
 * The units of the images and audio endpoints: the images a request made (dall-e's price is per
 * image), the seconds of audio transcribed (whisper-1's per minute), the characters of text
 * spoken (tts-1's per million characters). Each absent when not what the request did.
 */
export interface MediaUnits {
  images?: number;
  audioSeconds?: number;
  characters?: number;
}

/**
 * The largest token count sluice keeps: 2^31-1. It fits the ledger's integer columns of both
 * engines (PostgreSQL int4 and int8, SQLite INTEGER) and is exact as a JS number, and so is any
 * sum of a few of them (total_tokens), far below 2^53. No model has a context near it, so a
 * count above it is an upstream's bug, not a real request.
 */
export const MAX_TOKEN_COUNT = 2_147_483_647;

/**
 * The one door for token counts coming from an upstream: every provider's usage converter reads
 * its raw fields through it before any arithmetic (`[] + 5` is the string "5"). The rule:
 * - absent (`undefined` or `null`): stays absent;
 * - a finite number >= 0: floored (1.5 -> 1), and capped at MAX_TOKEN_COUNT (1e308 -> the cap);
 * - anything else (a string such as "12", an array, an object, NaN, Infinity, a negative): 0, and
 *   the field's name is listed in `invalid`, so the usage carries the flag.
 * Only JSON numbers count: a provider that sends "12" is broken, and guessing would hide it.
 */
export function normalizeTokenCounts<K extends string>(raw: { readonly [k in K]?: unknown }): {
  counts: { [k in K]?: number };
  invalid: K[];
} {
  const counts: { [k in K]?: number } = {};
  const invalid: K[] = [];
  for (const field in raw) {
    const value = raw[field];
    if (value === undefined || value === null) continue;
    const count = normalizeTokenCount(value);
    if (count === null) invalid.push(field);
    counts[field] = count ?? 0;
  }
  return { counts, invalid };
}

/** One count by normalizeTokenCounts' rule: the safe count, or null when `value` is not a count. */
export function normalizeTokenCount(value: unknown): number | null {
  if (typeof value !== 'number' || !(value >= 0) || value === Number.POSITIVE_INFINITY) return null;
  return Math.min(Math.floor(value), MAX_TOKEN_COUNT);
}

/** A sum of normalized counts (input = uncached + cache reads + cache writes), capped like one. */
export function sumTokenCounts(...counts: (number | undefined)[]): number {
  let total = 0;
  for (const n of counts) total += n ?? 0;
  return Math.min(total, MAX_TOKEN_COUNT);
}

/** OpenAI's usage object as sent to clients. */
export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number; audio_tokens?: number };
  completion_tokens_details?: {
    reasoning_tokens?: number;
    audio_tokens?: number;
    accepted_prediction_tokens?: number;
    rejected_prediction_tokens?: number;
  };
}

export function toOpenAIUsage(usage: Usage): OpenAIUsage {
  const out: OpenAIUsage = {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
  const prompt = defined({
    cached_tokens: usage.cachedInputTokens,
    cache_write_tokens: usage.cacheWriteTokens,
    audio_tokens: usage.audioInputTokens,
  });
  if (prompt) out.prompt_tokens_details = prompt;
  const completion = defined({
    reasoning_tokens: usage.reasoningTokens,
    audio_tokens: usage.audioOutputTokens,
    accepted_prediction_tokens: usage.acceptedPredictionTokens,
    rejected_prediction_tokens: usage.rejectedPredictionTokens,
  });
  if (completion) out.completion_tokens_details = completion;
  return out;
}

/** The fields that are set, or undefined when none is (a details object is sent only with content). */
function defined<T extends Record<string, number | undefined>>(fields: T): Partial<T> | undefined {
  const out: Partial<T> = {};
  let any = false;
  for (const key in fields) {
    if (fields[key] === undefined) continue;
    out[key] = fields[key];
    any = true;
  }
  return any ? out : undefined;
}

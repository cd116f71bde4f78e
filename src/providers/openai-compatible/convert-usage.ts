import { normalizeTokenCounts, sumTokenCounts, type Usage } from '../../protocol/canonical/usage.ts';

/** The usage fields the OpenAI family sends, with each vendor's variants. */
export interface OpenAIFamilyUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: {
    cached_tokens?: number | null;
    cache_write_tokens?: number | null;
    audio_tokens?: number | null;
  } | null;
  completion_tokens_details?: {
    reasoning_tokens?: number | null;
    audio_tokens?: number | null;
    accepted_prediction_tokens?: number | null;
    rejected_prediction_tokens?: number | null;
  } | null;
  /** DeepSeek's cache accounting. */
  prompt_cache_hit_tokens?: number;
  /** Together (through the Hugging Face router) reports it at the top level. */
  cached_tokens?: number;
}

/**
 * Normalizes to OpenAI semantics. xAI counts reasoning outside `completion_tokens` (its
 * total_tokens = prompt + completion + reasoning, see fixtures/xai/*.jsonl); when the total shows
 * that, reasoning is added back so that output tokens always include reasoning.
 */
export function convertOpenAIFamilyUsage(raw: OpenAIFamilyUsage): Usage {
  const { counts, invalid } = normalizeTokenCounts(familyCounts(raw));
  const input = counts.prompt_tokens ?? 0;
  let output = counts.completion_tokens ?? 0;
  const reasoning = counts.reasoning_tokens;
  if (reasoning && counts.total_tokens !== undefined && counts.total_tokens === input + output + reasoning) {
    output = sumTokenCounts(output, reasoning);
  }
  const usage: Usage = { inputTokens: input, outputTokens: output, source: 'provider' };
  addDetails(usage, counts);
  if (invalid.length > 0) usage.invalid = invalid;
  return usage;
}

/** Each count where the vendors put it: one field per count, before normalizing. */
function familyCounts(raw: OpenAIFamilyUsage) {
  return {
    prompt_tokens: raw.prompt_tokens,
    completion_tokens: raw.completion_tokens,
    total_tokens: raw.total_tokens,
    cached_tokens: raw.prompt_tokens_details?.cached_tokens ?? raw.prompt_cache_hit_tokens ?? raw.cached_tokens,
    cache_write_tokens: raw.prompt_tokens_details?.cache_write_tokens,
    reasoning_tokens: raw.completion_tokens_details?.reasoning_tokens,
    input_audio_tokens: raw.prompt_tokens_details?.audio_tokens,
    output_audio_tokens: raw.completion_tokens_details?.audio_tokens,
    accepted_prediction_tokens: raw.completion_tokens_details?.accepted_prediction_tokens,
    rejected_prediction_tokens: raw.completion_tokens_details?.rejected_prediction_tokens,
  };
}

/** The counts once normalized (normalizeTokenCounts): each a safe count, or absent. */
type FamilyCounts = { [k in keyof ReturnType<typeof familyCounts>]?: number };

/** The detail counts the upstream reported, and only those (an absent count is unknown, not 0). */
function addDetails(usage: Usage, counts: FamilyCounts): void {
  if (counts.cached_tokens !== undefined) usage.cachedInputTokens = counts.cached_tokens;
  if (counts.cache_write_tokens !== undefined) usage.cacheWriteTokens = counts.cache_write_tokens;
  if (counts.reasoning_tokens !== undefined) usage.reasoningTokens = counts.reasoning_tokens;
  if (counts.input_audio_tokens !== undefined) usage.audioInputTokens = counts.input_audio_tokens;
  if (counts.output_audio_tokens !== undefined) usage.audioOutputTokens = counts.output_audio_tokens;
  if (counts.accepted_prediction_tokens !== undefined) usage.acceptedPredictionTokens = counts.accepted_prediction_tokens;
  if (counts.rejected_prediction_tokens !== undefined) usage.rejectedPredictionTokens = counts.rejected_prediction_tokens;
}

import type { Usage } from '../../protocol/canonical/usage.ts';

/** The usage fields the OpenAI family sends, with each vendor's variants. */
export interface OpenAIFamilyUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number | null; cache_write_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
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
  const input = raw.prompt_tokens ?? 0;
  let output = raw.completion_tokens ?? 0;
  const reasoning = raw.completion_tokens_details?.reasoning_tokens ?? undefined;
  if (reasoning && raw.total_tokens !== undefined && raw.total_tokens === input + output + reasoning && reasoning > 0) {
    output += reasoning;
  }
  const usage: Usage = { inputTokens: input, outputTokens: output, source: 'provider' };
  const cached = raw.prompt_tokens_details?.cached_tokens ?? raw.prompt_cache_hit_tokens ?? raw.cached_tokens;
  if (cached != null) usage.cachedInputTokens = cached;
  const cacheWrite = raw.prompt_tokens_details?.cache_write_tokens;
  if (cacheWrite != null) usage.cacheWriteTokens = cacheWrite;
  if (reasoning != null) usage.reasoningTokens = reasoning;
  return usage;
}

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
  /** `provider` when the upstream reported it, `estimated` when sluice counted locally. */
  source: 'provider' | 'estimated';
}

/** OpenAI's usage object as sent to clients. */
export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

export function toOpenAIUsage(usage: Usage): OpenAIUsage {
  const out: OpenAIUsage = {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
  if (usage.cachedInputTokens !== undefined || usage.cacheWriteTokens !== undefined) {
    out.prompt_tokens_details = {};
    if (usage.cachedInputTokens !== undefined) out.prompt_tokens_details.cached_tokens = usage.cachedInputTokens;
    if (usage.cacheWriteTokens !== undefined) out.prompt_tokens_details.cache_write_tokens = usage.cacheWriteTokens;
  }
  if (usage.reasoningTokens !== undefined) out.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens };
  return out;
}

import { normalizeTokenCounts, sumTokenCounts, type Usage } from '../../protocol/canonical/usage.ts';

/** The usage fields Anthropic sends in message_start, message_delta and whole messages. */
export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/**
 * Folds a later usage report into an earlier one. message_delta's counts are cumulative and may
 * repeat the input fields (fixtures/anthropic/text-haiku45.sse) or omit them
 * (parallel-tool-use.sse), so a field only overrides when it is present.
 */
export function mergeAnthropicUsage(base: AnthropicUsage, update: AnthropicUsage): AnthropicUsage {
  const out: AnthropicUsage = { ...base };
  for (const key of ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const) {
    const value = update[key];
    if (typeof value === 'number') out[key] = value;
  }
  return out;
}

/**
 * Anthropic counts `input_tokens` without cache reads and cache writes; OpenAI's prompt_tokens
 * includes both, so they are added back. Thinking tokens are inside output_tokens and are not
 * reported on their own, so reasoningTokens stays unknown.
 */
export function convertAnthropicUsage(raw: AnthropicUsage): Usage {
  const { counts, invalid } = normalizeTokenCounts({
    input_tokens: raw.input_tokens,
    output_tokens: raw.output_tokens,
    cache_read_input_tokens: raw.cache_read_input_tokens,
    cache_creation_input_tokens: raw.cache_creation_input_tokens,
  });
  const cacheRead = counts.cache_read_input_tokens;
  const cacheWrite = counts.cache_creation_input_tokens;
  const usage: Usage = {
    inputTokens: sumTokenCounts(counts.input_tokens, cacheRead, cacheWrite),
    outputTokens: counts.output_tokens ?? 0,
    source: 'provider',
  };
  if (cacheRead !== undefined) usage.cachedInputTokens = cacheRead;
  if (cacheWrite !== undefined) usage.cacheWriteTokens = cacheWrite;
  if (invalid.length > 0) usage.invalid = invalid;
  return usage;
}

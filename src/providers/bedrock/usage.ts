import { normalizeTokenCounts, sumTokenCounts, type Usage } from '../../protocol/canonical/usage.ts';

/** Converse TokenUsage: only the fields sluice reads. */
export interface BedrockUsage {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

/**
 * Bedrock's `inputTokens` counts only the uncached input: cache reads and writes are reported
 * beside it (Bedrock user guide, "Prompt caching": total input = inputTokens +
 * cacheReadInputTokens + cacheWriteInputTokens), as Anthropic does. OpenAI's prompt_tokens
 * includes them, so they are added back. Bedrock reports no separate reasoning count.
 */
export function convertBedrockUsage(raw: BedrockUsage): Usage {
  const { counts, invalid } = normalizeTokenCounts({
    inputTokens: raw.inputTokens,
    outputTokens: raw.outputTokens,
    cacheReadInputTokens: raw.cacheReadInputTokens,
    cacheWriteInputTokens: raw.cacheWriteInputTokens,
  });
  const cacheRead = counts.cacheReadInputTokens;
  const cacheWrite = counts.cacheWriteInputTokens;
  const usage: Usage = {
    inputTokens: sumTokenCounts(counts.inputTokens, cacheRead, cacheWrite),
    outputTokens: counts.outputTokens ?? 0,
    source: 'provider',
  };
  if (cacheRead !== undefined) usage.cachedInputTokens = cacheRead;
  if (cacheWrite !== undefined) usage.cacheWriteTokens = cacheWrite;
  if (invalid.length > 0) usage.invalid = invalid;
  return usage;
}

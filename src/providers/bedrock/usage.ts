import type { Usage } from '../../protocol/canonical/usage.ts';

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
  const cacheRead = raw.cacheReadInputTokens;
  const cacheWrite = raw.cacheWriteInputTokens;
  const usage: Usage = {
    inputTokens: (raw.inputTokens ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0),
    outputTokens: raw.outputTokens ?? 0,
    source: 'provider',
  };
  if (cacheRead != null) usage.cachedInputTokens = cacheRead;
  if (cacheWrite != null) usage.cacheWriteTokens = cacheWrite;
  return usage;
}

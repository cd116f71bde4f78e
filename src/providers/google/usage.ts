import { normalizeTokenCounts, sumTokenCounts, type Usage } from '../../protocol/canonical/usage.ts';
import type { GeminiUsageMetadata } from './payload.ts';

/**
 * `usageMetadata` in OpenAI semantics. Gemini's totalTokenCount is prompt + toolUsePrompt +
 * candidates + thoughts (checked against every recording in fixtures/gemini/), so:
 * - input = promptTokenCount (which already includes cachedContentTokenCount) + toolUsePromptTokenCount;
 * - output = candidatesTokenCount + thoughtsTokenCount (thoughts are billed as output);
 * - cached = cachedContentTokenCount, reasoning = thoughtsTokenCount.
 * Returns undefined for metadata without counts (Vertex sends `{trafficType}` alone mid-stream).
 */
export function convertGeminiUsage(raw: GeminiUsageMetadata): Usage | undefined {
  const { counts, invalid } = normalizeTokenCounts({
    promptTokenCount: raw.promptTokenCount,
    candidatesTokenCount: raw.candidatesTokenCount,
    thoughtsTokenCount: raw.thoughtsTokenCount,
    toolUsePromptTokenCount: raw.toolUsePromptTokenCount,
    cachedContentTokenCount: raw.cachedContentTokenCount,
  });
  const { promptTokenCount, candidatesTokenCount, thoughtsTokenCount, toolUsePromptTokenCount } = counts;
  if (promptTokenCount === undefined && candidatesTokenCount === undefined && thoughtsTokenCount === undefined) {
    return undefined;
  }
  const usage: Usage = {
    inputTokens: sumTokenCounts(promptTokenCount, toolUsePromptTokenCount),
    outputTokens: sumTokenCounts(candidatesTokenCount, thoughtsTokenCount),
    source: 'provider',
  };
  if (counts.cachedContentTokenCount !== undefined) usage.cachedInputTokens = counts.cachedContentTokenCount;
  if (thoughtsTokenCount !== undefined) usage.reasoningTokens = thoughtsTokenCount;
  if (invalid.length > 0) usage.invalid = invalid;
  return usage;
}

import type { Usage } from '../../protocol/canonical/usage.ts';
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
  const { promptTokenCount, candidatesTokenCount, thoughtsTokenCount, toolUsePromptTokenCount } = raw;
  if (promptTokenCount === undefined && candidatesTokenCount === undefined && thoughtsTokenCount === undefined) {
    return undefined;
  }
  const usage: Usage = {
    inputTokens: (promptTokenCount ?? 0) + (toolUsePromptTokenCount ?? 0),
    outputTokens: (candidatesTokenCount ?? 0) + (thoughtsTokenCount ?? 0),
    source: 'provider',
  };
  if (raw.cachedContentTokenCount !== undefined) usage.cachedInputTokens = raw.cachedContentTokenCount;
  if (thoughtsTokenCount !== undefined) usage.reasoningTokens = thoughtsTokenCount;
  return usage;
}

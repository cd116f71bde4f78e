import type { ReasoningEffort } from '../../protocol/canonical/request.ts';

/** Gemini 3 takes a thinking level; there is no off switch, `minimal` is the least. */
const LEVELS: Record<ReasoningEffort, string> = {
  none: 'minimal',
  minimal: 'minimal',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'high',
};

/**
 * Gemini 2.5 takes a token budget. low/medium/high are the budgets Google's own OpenAI-compatible
 * endpoint uses (1024/8192/24576); none is 0 (Pro refuses it: the upstream says so); minimal is
 * 512, the smallest budget every 2.5 model accepts; xhigh is each model's maximum.
 */
const BUDGETS: Record<Exclude<ReasoningEffort, 'xhigh'>, number> = {
  none: 0,
  minimal: 512,
  low: 1024,
  medium: 8192,
  high: 24576,
};

/** Gemini 3 and later are level-based; `models/` prefixes and tuned-model paths are tolerated. */
export function isLevelBasedModel(model: string): boolean {
  return /(^|\/)gemini-([3-9]|\d{2,})/.test(model);
}

/**
 * `reasoning_effort` -> `generationConfig.thinkingConfig`. Thought summaries are asked for
 * (`includeThoughts`) whenever the client asked for reasoning, so they stream as
 * reasoning_content; with no reasoning_effort the model's default thinking is left alone.
 */
export function thinkingConfig(effort: ReasoningEffort | null | undefined, model: string): Record<string, unknown> | undefined {
  if (!effort) return undefined;
  const config: Record<string, unknown> = isLevelBasedModel(model)
    ? { thinkingLevel: LEVELS[effort] }
    : { thinkingBudget: effort === 'xhigh' ? (/-pro/.test(model) ? 32768 : 24576) : BUDGETS[effort] };
  if (effort !== 'none') config.includeThoughts = true;
  return config;
}

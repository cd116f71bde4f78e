import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import type { Unsupported } from './unsupported.ts';

/**
 * Anthropic requires max_tokens; OpenAI clients usually send none. 4096 fits every Claude model's
 * output limit and a normal answer; with thinking, the budget is added on top of it.
 */
export const DEFAULT_MAX_TOKENS = 4096;

/**
 * reasoning_effort -> `thinking.budget_tokens`. 1024 is Anthropic's documented minimum; each
 * level doubles or so, and the top stays under 32k (above which Anthropic advises batch jobs) with
 * room for an answer on models whose output limit is 32k (Claude Opus 4 and 4.1).
 */
export const THINKING_BUDGETS = { minimal: 1024, low: 4096, medium: 8192, high: 16384, xhigh: 24576 } as const;

const MIN_BUDGET = 1024;

export interface TokenPlan {
  maxTokens: number;
  /** Set when extended thinking is on. */
  budgetTokens?: number;
}

/**
 * max_completion_tokens (or max_tokens) counts reasoning in OpenAI's API, and Anthropic's
 * max_tokens counts thinking too, so the client's limit goes through unchanged; the budget must
 * stay below it (Anthropic: budget_tokens < max_tokens), and is lowered to fit when it does not.
 */
export function planTokens(request: CanonicalRequest, unsupported: Unsupported): TokenPlan {
  const limitParam = request.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
  const limit = request.max_completion_tokens ?? request.max_tokens ?? undefined;
  const effort = request.reasoning_effort;
  if (!effort || effort === 'none') return { maxTokens: limit ?? DEFAULT_MAX_TOKENS };
  const budget = THINKING_BUDGETS[effort];
  if (limit === undefined) return { maxTokens: budget + DEFAULT_MAX_TOKENS, budgetTokens: budget };
  if (limit - 1 < MIN_BUDGET) {
    unsupported(
      limitParam,
      `anthropic needs ${limitParam} of at least ${MIN_BUDGET + 1} to think (reasoning_effort "${effort}"): its thinking budget is at least ${MIN_BUDGET} tokens and must be below the limit.`,
    );
    return { maxTokens: limit };
  }
  return { maxTokens: limit, budgetTokens: Math.min(budget, limit - 1) };
}

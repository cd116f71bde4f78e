import type { FinishReason } from '../../protocol/canonical/finish-reason.ts';

/**
 * Anthropic's `stop_reason` values (Messages API "Handling stop reasons"). `pause_turn` (a long
 * server-tool turn paused) is a normal end of this response; `model_context_window_exceeded` ran
 * out of room like `max_tokens` did.
 */
const reasons: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

/** An unknown stop reason is a natural stop: the text already arrived. */
export function anthropicFinishReason(stopReason: string): FinishReason {
  // Own keys only: a stop_reason such as `constructor` must not find Object.prototype's.
  return Object.hasOwn(reasons, stopReason) ? reasons[stopReason] : 'stop';
}

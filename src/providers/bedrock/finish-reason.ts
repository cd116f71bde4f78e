import type { FinishReason } from '../../protocol/canonical/finish-reason.ts';

/** Converse `stopReason` values (API reference, ConverseStream MessageStopEvent). */
const reasons: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

/** Anything unknown is a natural stop; a stop after tool calls is a tool turn (clients loop on it). */
export function bedrockFinishReason(raw: string, hadToolCalls: boolean): FinishReason {
  // Own keys only: a stopReason such as `constructor` must not find Object.prototype's.
  const reason = Object.hasOwn(reasons, raw) ? reasons[raw] : 'stop';
  return reason === 'stop' && hadToolCalls ? 'tool_calls' : reason;
}

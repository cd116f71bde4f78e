/** The normalized finish reasons of the OpenAI chat surface. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

const known: Record<string, FinishReason> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  content_filter: 'content_filter',
  // The deprecated function-calling finish reason still comes from some OpenAI-compatible servers.
  function_call: 'tool_calls',
  // Several servers (vLLM, TGI, Mistral) say model_length / eos / end_turn.
  model_length: 'length',
  max_tokens: 'length',
  eos: 'stop',
  eos_token: 'stop',
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
};

/**
 * Maps an OpenAI-family finish reason; anything unknown is a natural stop. `error` (OpenRouter's,
 * for a generation that failed) is no finish at all: the decoders make it the stream's failure.
 */
export function normalizeFinishReason(raw: string): FinishReason {
  // Own keys only: a finish_reason such as `constructor` must not find Object.prototype's.
  return Object.hasOwn(known, raw) ? known[raw] : 'stop';
}

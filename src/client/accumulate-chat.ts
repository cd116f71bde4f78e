import { isObject } from './errors.ts';
import type { StreamMessage, StreamToolCall } from './types.ts';

/**
 * A chat completions chunk into the message: choice 0's content, `reasoning_content` and its
 * `reasoning_signature`, tool call fragments joined by their `index`, the finish reason, and the
 * usage chunk (with `cost_usd` and `estimated` when the endpoint has usage extensions).
 */
export function accumulateChatChunk(message: StreamMessage, chunk: Record<string, unknown>): void {
  if (typeof chunk.id === 'string') message.id ??= chunk.id;
  if (typeof chunk.model === 'string') message.model ??= chunk.model;
  const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
  for (const choice of choices) {
    if (isObject(choice) && (choice.index ?? 0) === 0) accumulateChoice(message, choice);
  }
  if (isObject(chunk.usage)) accumulateChatUsage(message, chunk.usage);
}

/** Choice 0's delta (text, reasoning, tool call fragments) and its finish reason. */
function accumulateChoice(message: StreamMessage, choice: Record<string, unknown>): void {
  const delta = isObject(choice.delta) ? choice.delta : {};
  if (typeof delta.content === 'string') message.text += delta.content;
  if (typeof delta.reasoning_content === 'string') message.reasoning += delta.reasoning_content;
  if (typeof delta.reasoning_signature === 'string') message.reasoningSignature = delta.reasoning_signature;
  if (Array.isArray(delta.tool_calls)) for (const part of delta.tool_calls) if (isObject(part)) joinToolCall(message, part);
  if (typeof choice.finish_reason === 'string') message.finishReason = choice.finish_reason;
}

/** The usage chunk replaces any earlier usage; `cost_usd` and `estimated` are usage extensions. */
function accumulateChatUsage(message: StreamMessage, u: Record<string, unknown>): void {
  const prompt = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const completion = isObject(u.completion_tokens_details) ? u.completion_tokens_details : {};
  message.usage = {
    inputTokens: num(u.prompt_tokens),
    outputTokens: num(u.completion_tokens),
    ...(typeof prompt.cached_tokens === 'number' ? { cachedInputTokens: prompt.cached_tokens } : {}),
    ...(typeof completion.reasoning_tokens === 'number' ? { reasoningTokens: completion.reasoning_tokens } : {}),
    ...(typeof u.estimated === 'boolean' ? { estimated: u.estimated } : {}),
  };
  if (typeof u.cost_usd === 'number') message.costUsd = u.cost_usd;
}

function joinToolCall(message: StreamMessage, part: Record<string, unknown>): void {
  const index = typeof part.index === 'number' ? part.index : 0;
  let call: StreamToolCall | undefined = message.toolCalls.find((c) => c.index === index);
  if (!call) {
    call = { index, id: '', name: '', arguments: '' };
    message.toolCalls.push(call);
  }
  if (typeof part.id === 'string') call.id = part.id;
  const fn = isObject(part.function) ? part.function : {};
  if (typeof fn.name === 'string') call.name += fn.name;
  if (typeof fn.arguments === 'string') call.arguments += fn.arguments;
}

/**
 * The accounting profile's totals (`usage_final`, or `cache_hit`'s cached tokens), which replace
 * the chunk usage that profile does not send.
 */
export function accumulateAccountingEvent(message: StreamMessage, event: Record<string, unknown>): void {
  if (typeof event.model === 'string') message.model ??= event.model;
  if (event.type === 'cache_hit' && typeof event.cached_tokens === 'number') {
    message.usage = { inputTokens: 0, outputTokens: 0, ...message.usage, cachedInputTokens: event.cached_tokens };
  }
  if (event.type === 'usage_final') {
    message.usage = {
      ...message.usage,
      inputTokens: num(event.input_tokens),
      outputTokens: num(event.output_tokens),
      ...(typeof event.estimated === 'boolean' ? { estimated: event.estimated } : {}),
    };
    if (typeof event.cost_usd === 'number') message.costUsd = event.cost_usd;
  }
}

export function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

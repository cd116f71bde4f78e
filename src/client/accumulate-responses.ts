import { num } from './accumulate-chat.ts';
import { isObject } from './errors.ts';
import type { StreamMessage, StreamToolCall } from './types.ts';

/**
 * A Responses API event into the message: output text, reasoning (summary or full text, its
 * `encrypted_content` as the signature), function calls by output index (arguments from their
 * deltas, or the finished item's), and the terminal response's status and usage.
 */
export function accumulateResponsesEvent(message: StreamMessage, event: Record<string, unknown>): void {
  const type = event.type;
  const outputIndex = typeof event.output_index === 'number' ? event.output_index : 0;
  if (isObject(event.response)) takeResponse(message, event.response, type);
  switch (type) {
    case 'response.output_text.delta':
      if (typeof event.delta === 'string') message.text += event.delta;
      return;
    case 'response.reasoning_summary_text.delta':
    case 'response.reasoning_text.delta':
      if (typeof event.delta === 'string') message.reasoning += event.delta;
      return;
    case 'response.output_item.added':
    case 'response.output_item.done':
      if (isObject(event.item)) takeItem(message, event.item, outputIndex, type === 'response.output_item.done');
      return;
    case 'response.function_call_arguments.delta': {
      const call = message.toolCalls.find((c) => c.index === outputIndex);
      if (call && typeof event.delta === 'string') call.arguments += event.delta;
      return;
    }
  }
}

function takeItem(message: StreamMessage, item: Record<string, unknown>, index: number, done: boolean): void {
  if (item.type === 'reasoning' && typeof item.encrypted_content === 'string')
    message.reasoningSignature = item.encrypted_content;
  if (item.type !== 'function_call') return;
  let call: StreamToolCall | undefined = message.toolCalls.find((c) => c.index === index);
  if (!call) {
    call = { index, id: '', name: '', arguments: '' };
    message.toolCalls.push(call);
  }
  if (typeof item.call_id === 'string') call.id = item.call_id;
  if (typeof item.name === 'string') call.name = item.name;
  // The finished item holds the whole arguments: they win over deltas a relay may have skipped.
  if (done && typeof item.arguments === 'string') call.arguments = item.arguments;
}

function takeResponse(message: StreamMessage, response: Record<string, unknown>, type: unknown): void {
  if (typeof response.id === 'string') message.id ??= response.id;
  if (typeof response.model === 'string') message.model ??= response.model;
  if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
    if (typeof response.status === 'string') message.finishReason = response.status;
  }
  if (!isObject(response.usage)) return;
  const u = response.usage;
  const input = isObject(u.input_tokens_details) ? u.input_tokens_details : {};
  const output = isObject(u.output_tokens_details) ? u.output_tokens_details : {};
  message.usage = {
    inputTokens: num(u.input_tokens),
    outputTokens: num(u.output_tokens),
    ...(typeof input.cached_tokens === 'number' ? { cachedInputTokens: input.cached_tokens } : {}),
    ...(typeof output.reasoning_tokens === 'number' ? { reasoningTokens: output.reasoning_tokens } : {}),
    ...(typeof u.estimated === 'boolean' ? { estimated: u.estimated } : {}),
  };
  if (typeof u.cost_usd === 'number') message.costUsd = u.cost_usd;
}

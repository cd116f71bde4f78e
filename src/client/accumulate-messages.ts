import { num } from './accumulate-chat.ts';
import { isObject } from './errors.ts';
import type { StreamMessage, StreamToolCall, StreamUsage } from './types.ts';

/** The tool calls of a Messages stream by their content block index (a tool call's `index` is its ordinal). */
export type BlockTools = Map<number, StreamToolCall>;

/**
 * An Anthropic Messages event into the message: text and thinking deltas, `signature_delta` as
 * the reasoning signature, tool_use blocks with their `input_json_delta` fragments, the stop
 * reason, and the usage of message_start merged with message_delta's.
 */
export function accumulateMessagesEvent(message: StreamMessage, event: Record<string, unknown>, tools: BlockTools): void {
  const blockIndex = typeof event.index === 'number' ? event.index : 0;
  switch (event.type) {
    case 'message_start': {
      const m = isObject(event.message) ? event.message : {};
      if (typeof m.id === 'string') message.id = m.id;
      if (typeof m.model === 'string') message.model = m.model;
      if (isObject(m.usage)) mergeUsage(message, m.usage);
      return;
    }
    case 'content_block_start': {
      const block = isObject(event.content_block) ? event.content_block : {};
      if (block.type === 'text' && typeof block.text === 'string') message.text += block.text;
      if (block.type === 'thinking') {
        if (typeof block.thinking === 'string') message.reasoning += block.thinking;
        if (typeof block.signature === 'string' && block.signature) message.reasoningSignature = block.signature;
      }
      if (block.type === 'tool_use' || block.type === 'server_tool_use') {
        const call = {
          index: message.toolCalls.length,
          id: String(block.id ?? ''),
          name: String(block.name ?? ''),
          arguments: '',
        };
        message.toolCalls.push(call);
        tools.set(blockIndex, call);
      }
      return;
    }
    case 'content_block_delta': {
      const delta = isObject(event.delta) ? event.delta : {};
      if (delta.type === 'text_delta' && typeof delta.text === 'string') message.text += delta.text;
      if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') message.reasoning += delta.thinking;
      if (delta.type === 'signature_delta' && typeof delta.signature === 'string') message.reasoningSignature = delta.signature;
      const call = tools.get(blockIndex);
      if (delta.type === 'input_json_delta' && call && typeof delta.partial_json === 'string')
        call.arguments += delta.partial_json;
      return;
    }
    case 'message_delta': {
      const delta = isObject(event.delta) ? event.delta : {};
      if (typeof delta.stop_reason === 'string') message.finishReason = delta.stop_reason;
      if (isObject(event.usage)) mergeUsage(message, event.usage);
      return;
    }
  }
}

/** message_delta's usage is cumulative: a field it carries replaces message_start's. */
function mergeUsage(message: StreamMessage, u: Record<string, unknown>): void {
  const usage: StreamUsage = message.usage ?? { inputTokens: 0, outputTokens: 0 };
  if (typeof u.input_tokens === 'number') usage.inputTokens = u.input_tokens;
  if (typeof u.output_tokens === 'number') usage.outputTokens = num(u.output_tokens);
  if (typeof u.cache_read_input_tokens === 'number') usage.cachedInputTokens = u.cache_read_input_tokens;
  if (typeof u.cache_creation_input_tokens === 'number') usage.cacheCreationInputTokens = u.cache_creation_input_tokens;
  message.usage = usage;
}

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
    case 'message_start':
      if (isObject(event.message)) startMessage(message, event.message);
      return;
    case 'content_block_start':
      if (isObject(event.content_block)) startBlock(message, event.content_block, blockIndex, tools);
      return;
    case 'content_block_delta':
      if (isObject(event.delta)) addBlockDelta(message, event.delta, tools.get(blockIndex));
      return;
    case 'message_delta': {
      const delta = isObject(event.delta) ? event.delta : {};
      if (typeof delta.stop_reason === 'string') message.finishReason = delta.stop_reason;
      if (isObject(event.usage)) mergeUsage(message, event.usage);
      return;
    }
  }
}

function startMessage(message: StreamMessage, m: Record<string, unknown>): void {
  if (typeof m.id === 'string') message.id = m.id;
  if (typeof m.model === 'string') message.model = m.model;
  if (isObject(m.usage)) mergeUsage(message, m.usage);
}

/** A text or thinking block may start with content; a tool_use block opens a tool call at its block index. */
function startBlock(message: StreamMessage, block: Record<string, unknown>, blockIndex: number, tools: BlockTools): void {
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
}

/** A delta of the block `call` (the tool call open at the delta's block index, if any). */
function addBlockDelta(message: StreamMessage, delta: Record<string, unknown>, call: StreamToolCall | undefined): void {
  if (delta.type === 'text_delta' && typeof delta.text === 'string') message.text += delta.text;
  if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') message.reasoning += delta.thinking;
  if (delta.type === 'signature_delta' && typeof delta.signature === 'string') message.reasoningSignature = delta.signature;
  if (delta.type === 'input_json_delta' && call && typeof delta.partial_json === 'string') call.arguments += delta.partial_json;
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

import { errors } from '../../errors/catalog.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { type AnthropicContentBlock, AnthropicEventDecoder, type AnthropicStreamPayload } from './decode-stream.ts';
import { anthropicStreamError, PROVIDER } from './map-error.ts';
import type { AnthropicUsage } from './usage.ts';

interface AnthropicMessage {
  type?: string;
  id?: string;
  model?: string;
  content?: AnthropicContentBlock[] | null;
  stop_reason?: string | null;
  usage?: AnthropicUsage | null;
  error?: unknown;
}

/**
 * A whole Messages API response -> canonical events. It is replayed as the stream it would have
 * been (start, one block after another, message_delta), so both paths share one translation:
 * a tool_use block's `input` becomes its arguments JSON.
 */
export function decodeAnthropicResponse(body: unknown): CanonicalEvent[] {
  const message = (body ?? {}) as AnthropicMessage;
  if (message.type === 'error') return [{ type: 'error', error: anthropicStreamError(message) }];
  if (!Array.isArray(message.content)) {
    return [{ type: 'error', error: errors.malformed(PROVIDER, 'response has no content array') }];
  }
  const decoder = new AnthropicEventDecoder();
  const out: CanonicalEvent[] = [];
  const feed = (payload: AnthropicStreamPayload) => decoder.decode(payload, out);
  feed({ type: 'message_start', message: { id: message.id, model: message.model } });
  message.content.forEach((block, index) => {
    if (block.type === 'tool_use') {
      feed({ type: 'content_block_start', index, content_block: { ...block, input: {} } });
      const input = JSON.stringify(block.input ?? {});
      if (input !== '{}') feed({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: input } });
    } else {
      feed({ type: 'content_block_start', index, content_block: block });
    }
    feed({ type: 'content_block_stop', index });
  });
  feed({ type: 'message_delta', delta: { stop_reason: message.stop_reason ?? null }, usage: message.usage ?? null });
  return out;
}

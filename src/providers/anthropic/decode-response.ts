import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { checkPayload } from '../upstream-schema.ts';
import { AnthropicEventDecoder } from './decode-stream.ts';
import { anthropicStreamError, PROVIDER } from './map-error.ts';
import { type AnthropicStreamPayload, messageSchema } from './payload-schema.ts';

/**
 * A whole Messages API response -> canonical events. It is replayed as the stream it would have
 * been (start, one block after another, message_delta), so both paths share one translation:
 * a tool_use block's `input` becomes its arguments JSON.
 */
export function decodeAnthropicResponse(body: unknown): CanonicalEvent[] {
  if ((body as { type?: unknown } | null)?.type === 'error') return [{ type: 'error', error: anthropicStreamError(body) }];
  const checked = checkPayload(messageSchema, body, PROVIDER, 'response');
  if (!checked.ok) return [{ type: 'error', error: checked.error }];
  const message = checked.value;
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

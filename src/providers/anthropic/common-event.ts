import type { AnthropicStreamPayload } from './payload-schema.ts';

const DELTA_FIELDS = ['type', 'text', 'thinking', 'signature', 'partial_json', 'stop_reason'] as const;

/**
 * The events that come once per token (content_block_delta: text, thinking, signature and tool
 * input deltas) and the small ones around them (ping, content_block_stop), checked by hand: when
 * `raw` is one of them with every field sluice reads of the type streamPayloadSchema lets
 * through unchanged, it is returned as the parsed payload and zod is skipped. Everything else
 * (message_start, content_block_start, message_delta with its usage, error, a value of a wrong
 * type) returns undefined and goes through the schema, the one definition of what is valid.
 * Measured in a bench allocation profile: zod's checks of these events were the largest
 * allocation of an Anthropic -> OpenAI stream. common-event.test.ts decodes every recording both
 * ways and requires the same events. (The OpenAI-compatible decoder does the same, with why it is
 * hand-written: openai-compatible/common-chunk.ts.)
 */
export function commonEvent(raw: Record<string, unknown>): AnthropicStreamPayload | undefined {
  if (typeof raw.type !== 'string') return undefined;
  if (raw.message != null || raw.content_block != null || raw.usage != null) return undefined;
  const index = raw.index;
  if (index != null && !(Number.isSafeInteger(index) && (index as number) >= 0)) return undefined;
  const delta = raw.delta;
  if (delta != null) {
    if (typeof delta !== 'object' || Array.isArray(delta)) return undefined;
    const d = delta as Record<string, unknown>;
    for (const field of DELTA_FIELDS) if (d[field] != null && typeof d[field] !== 'string') return undefined;
  }
  return raw as AnthropicStreamPayload;
}

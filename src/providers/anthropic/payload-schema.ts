import { z } from 'zod';
import { joinIndex, jsonValue, label, str, tokenCount } from '../upstream-schema.ts';

/** The Messages API payloads, only the fields sluice reads (lenient upstream: the rest is ignored). */

/** The usage fields Anthropic sends in message_start, message_delta and whole messages. */
const usage = z.object({
  input_tokens: tokenCount,
  output_tokens: tokenCount,
  cache_read_input_tokens: tokenCount,
  cache_creation_input_tokens: tokenCount,
});

/** A content block as content_block_start (or a whole message) carries it. */
const contentBlock = z.object({
  type: str,
  text: str,
  thinking: str,
  signature: str,
  /** redacted_thinking: the encrypted reasoning. */
  data: str,
  id: str,
  name: str,
  /** A whole message's tool_use input (a stream opens the block with `{}`). */
  input: jsonValue.optional(),
});

/** One Messages API stream event (the `data:` of a frame). */
export const streamPayloadSchema = z.object({
  type: str,
  message: z.object({ id: label, model: label, usage: usage.nullish() }).nullish(),
  index: joinIndex.nullish(),
  content_block: contentBlock.nullish(),
  delta: z.object({ type: str, text: str, thinking: str, signature: str, partial_json: str, stop_reason: str }).nullish(),
  usage: usage.nullish(),
  /** Read by map-error.ts for `error` events. */
  error: z.unknown().optional(),
});

/** A whole (non-streaming) Messages API response. */
export const messageSchema = z.object({
  id: label,
  model: label,
  content: z.array(contentBlock),
  stop_reason: str,
  usage: usage.nullish(),
});

export type AnthropicStreamPayload = z.infer<typeof streamPayloadSchema>;
export type AnthropicContentBlock = z.infer<typeof contentBlock>;

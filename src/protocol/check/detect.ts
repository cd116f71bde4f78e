import type { Frame } from './types.ts';

import { mediaFamily } from './media-frames.ts';

export type StreamKind = 'chat' | 'responses' | 'messages' | 'media';

/**
 * Which surface a frame belongs to, when it tells: a `response.*` event (but the accounting
 * profile's closing `response.done`) is the Responses API, a chunk or an accounting event is chat
 * completions, `message_start` and its kin Anthropic's Messages API, an image, transcript or
 * speech event OpenAI's media streams. Error frames, vendor events and `[DONE]` tell nothing.
 */
export function detectKind(f: Frame): StreamKind | undefined {
  const type = typeof f.json?.type === 'string' ? f.json.type : f.event;
  if (type?.startsWith('response.') && type !== 'response.done') return 'responses';
  if (f.json && (Array.isArray(f.json.choices) || f.json.object === 'chat.completion.chunk')) return 'chat';
  if (type === 'usage_start' || type === 'usage_final') return 'chat';
  if (type === 'message_start' || type === 'ping' || type === 'message_stop' || type?.startsWith('content_block_'))
    return 'messages';
  if (mediaFamily(type)) return 'media';
  return undefined;
}

import type { StreamFrame, StreamSurface } from './types.ts';

/** The events of the accounting profile (docs/streams/profiles.md), and `response.done` that closes it. */
const ACCOUNTING_EVENTS = new Set([
  'usage_start',
  'rate_limit_warning',
  'provider_fallback',
  'cache_hit',
  'usage_final',
  'response.done',
]);

export type FrameKind = StreamSurface | 'accounting' | 'vendor' | 'ping' | 'other';

/** What a frame is, from its `type` (or its `event:` name when the payload has none). */
export function classifyFrame(frame: StreamFrame): FrameKind {
  const type = typeof frame.data.type === 'string' ? frame.data.type : frame.event;
  if (type?.startsWith('x_')) return 'vendor';
  if (type !== undefined && ACCOUNTING_EVENTS.has(type)) return 'accounting';
  if (Array.isArray(frame.data.choices) || frame.data.object === 'chat.completion.chunk') return 'chat';
  if (type === 'ping') return 'ping';
  if (type?.startsWith('response.')) return 'responses';
  if (type?.startsWith('message_') || type?.startsWith('content_block_')) return 'messages';
  return 'other';
}

/**
 * The frames after which a stream is whole even if the connection stays open a moment longer: a
 * text surface's end, or a media stream's (an image made, a transcript or speech done: the reader
 * accumulates no text from those streams, it only reads them to their end).
 */
const END_EVENTS = new Set([
  'message_stop',
  'response.completed',
  'response.incomplete',
  'image_generation.completed',
  'image_edit.completed',
  'transcript.text.done',
  'speech.audio.done',
]);

export function endsStream(frame: StreamFrame): boolean {
  const type = frame.data.type;
  return typeof type === 'string' && END_EVENTS.has(type);
}

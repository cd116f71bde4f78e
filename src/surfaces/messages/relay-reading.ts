import type { MessagesRelayItem } from '../../providers/types.ts';
import { canonicalVerdict, type StreamReading } from '../../routing/route-stream.ts';

/**
 * A relayed Messages stream (Anthropic's frames byte for byte) read by the events decoded beside
 * its frames: message_start and ping are not an answer, Anthropic's `event: error` (a 200 stream
 * whose first event is overloaded_error) before any output is a failure to fall back from.
 */
export const messagesRelayReading: StreamReading<MessagesRelayItem> = {
  verdict(batch) {
    const events = [];
    for (const item of batch) if ('event' in item) events.push(item.event);
    return canonicalVerdict(events);
  },
};

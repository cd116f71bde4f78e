import { createParser } from 'eventsource-parser';
import { asObject, type Frame, type Report } from './types.ts';

export interface SseReader {
  push(text: string): void;
  /** The end of the body: a last event without its blank line is still read, and reported. */
  end(): void;
}

/**
 * The body as a client's SSE parser reads it (eventsource-parser, the one the openai SDKs'
 * decoders agree with): comments (`: heartbeat`) and `retry:` are skipped, `id:` lines are kept on
 * the frame, and a line that is no SSE field is a violation rather than silently dropped.
 */
export function createSseReader(onFrame: (frame: Frame) => void, report: Report): SseReader {
  let n = 0;
  const parser = createParser({
    onEvent(message) {
      n += 1;
      onFrame({ n, event: message.event, id: message.id, data: message.data, json: parseJson(message.data) });
    },
    onError(error) {
      if (error.type === 'invalid-retry') return report(n + 1, 'sse/syntax', `invalid retry: line ${quote(error.line ?? '')}`);
      report(n + 1, 'sse/syntax', `line is not server-sent events: ${quote(error.line ?? error.message)}`);
    },
  });
  // eventsource-parser reports a line that is no SSE field only when the whole line arrives in
  // one feed (see sse/parse-upstream.ts): lines are fed whole, so a report never depends on how
  // the bytes were split.
  let partial = '';
  return {
    push(text) {
      const cut = text.lastIndexOf('\n');
      if (cut === -1) {
        partial += text;
        return;
      }
      parser.feed(partial + text.slice(0, cut + 1));
      partial = text.slice(cut + 1);
    },
    end() {
      parser.feed(partial);
      partial = '';
      // A final event with no blank line after it is dropped by a browser's EventSource and kept
      // by most SDKs: read it, and say the stream was cut.
      const before = n;
      parser.feed('\n\n');
      if (n > before) report(n, 'sse/unterminated', 'the last frame is not followed by a blank line (the stream was cut)');
      parser.reset({ consume: true });
    },
  };
}

function parseJson(data: string): Record<string, unknown> | undefined {
  if (data === '[DONE]') return undefined;
  try {
    return asObject(JSON.parse(data));
  } catch {
    return undefined;
  }
}

export function quote(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

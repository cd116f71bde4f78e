import { classifyChatFrame } from './chat-frame.ts';
import { quote } from './read-sse.ts';
import { asObject, type Frame, type Report, type RuleFamily } from './types.ts';

/**
 * Every frame is a chunk, an error, a vendor `x_*` event or an accounting event; an error frame
 * says what went wrong and is followed at once by `[DONE]` (reference/chat-streaming-usage.txt,
 * chat-streaming-full.txt for `event: error`, accounting-events.txt for `{"type":"error"}`).
 */
export function chatFrameRules(): RuleFamily {
  let errorAt: number | null = null;
  return {
    frame(f: Frame, report: Report) {
      const frame = classifyChatFrame(f);
      if (errorAt !== null && frame.kind !== 'done') {
        report(f.n, 'chat/error-then-done', `the error frame ${errorAt} is followed by this frame, not [DONE]`);
      }
      errorAt = null;
      if (frame.kind === 'other' && f.json) {
        report(
          f.n,
          'chat/frame-kind',
          `neither a chat.completion.chunk nor an error, x_ vendor or accounting event: ${quote(f.data)}`,
        );
      }
      if (frame.kind === 'error') {
        errorAt = f.n;
        const error = asObject(frame.payload.error);
        const message = error ? error.message : frame.payload.data;
        if (typeof message !== 'string') report(f.n, 'chat/frame-kind', 'an error frame without a message');
      }
    },
    end(report: Report) {
      if (errorAt !== null) report(errorAt, 'chat/error-then-done', 'the stream ends after the error frame without [DONE]');
    },
  };
}

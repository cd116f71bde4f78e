import { chatChoiceRules } from './chat-choices.ts';
import { chatFrameRules } from './chat-frames.ts';
import { chatToolCallRules } from './chat-tool-calls.ts';
import { chatUsageRules } from './chat-usage.ts';
import { detectKind, type StreamKind } from './detect.ts';
import { mediaFrameRules } from './media-frames.ts';
import { messagesFrameRules } from './messages-frames.ts';
import { createSseReader } from './read-sse.ts';
import { responsesFrameRules } from './responses-frames.ts';
import { responsesItemRules } from './responses-items.ts';
import { responsesTerminalRules } from './responses-terminal.ts';
import { streamRules } from './stream-rules.ts';
import type { Frame, RuleFamily, Violation } from './types.ts';

export type { StreamKind } from './detect.ts';
export type { Violation } from './types.ts';

export interface CheckReport {
  kind: StreamKind;
  /** SSE events read (comments such as `: heartbeat` are not frames). */
  frames: number;
  /** In stream order; those only the end shows (frame null) last. */
  violations: Violation[];
}

export interface StreamChecker {
  /** Feed the body as it arrives (text, or bytes decoded as UTF-8 across pushes). */
  push(chunk: string | Uint8Array): void;
  end(): CheckReport;
}

function rulesFor(kind: StreamKind): RuleFamily[] {
  switch (kind) {
    case 'chat':
      return [streamRules({ doneRequired: true }), chatFrameRules(), chatChoiceRules(), chatToolCallRules(), chatUsageRules()];
    case 'responses':
      return [streamRules({ doneRequired: false }), responsesFrameRules(), responsesItemRules(), responsesTerminalRules()];
    case 'messages':
      return [streamRules({ doneRequired: false }), messagesFrameRules()];
    case 'media':
      return [streamRules({ doneRequired: false }), mediaFrameRules()];
  }
}

/**
 * The stream conformance checker behind `sluice check` and the test suite's stream tap: it reads
 * a chat-completions stream (in any stream profile: protocol/stream-profiles.ts), a Responses
 * stream, an Anthropic Messages stream or an OpenAI media stream (images, transcript, speech), tells which from its first frames unless `kind` is given, and reports every
 * violation of the stream contract with the frame that shows it.
 */
export function createStreamChecker(options: { kind?: StreamKind } = {}): StreamChecker {
  const violations: Violation[] = [];
  const atEnd: Violation[] = [];
  const report = (frame: number | null, rule: Violation['rule'], message: string) =>
    (frame === null ? atEnd : violations).push({ frame, rule, message });
  let kind = options.kind;
  let families = kind ? rulesFor(kind) : undefined;
  // Frames read before the kind is known (error frames, vendor events), replayed once it is.
  const waiting: Frame[] = [];
  let frames = 0;
  const decoder = new TextDecoder('utf-8');

  const reader = createSseReader((f) => {
    frames = f.n;
    if (!families) {
      waiting.push(f);
      kind = detectKind(f);
      if (!kind) return;
      families = rulesFor(kind);
      for (const w of waiting.splice(0)) for (const family of families) family.frame(w, report);
      return;
    }
    for (const family of families) family.frame(f, report);
  }, report);

  return {
    push(chunk) {
      reader.push(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    },
    end() {
      const rest = decoder.decode();
      if (rest) reader.push(rest);
      reader.end();
      if (!families) {
        kind = 'chat';
        families = rulesFor(kind);
        for (const w of waiting.splice(0)) for (const family of families) family.frame(w, report);
      }
      for (const family of families) family.end(report);
      // Frame numbers only grow, but two families may report out of order on one frame.
      violations.sort((a, b) => (a.frame ?? 0) - (b.frame ?? 0));
      return { kind: kind ?? 'chat', frames, violations: [...violations, ...atEnd] };
    },
  };
}

/** The whole body at once. */
export function checkStream(body: string | Uint8Array, options: { kind?: StreamKind } = {}): CheckReport {
  const checker = createStreamChecker(options);
  checker.push(body);
  return checker.end();
}

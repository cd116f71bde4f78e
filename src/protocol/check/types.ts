/** One SSE event as a client parser dispatches it, numbered from 1 in stream order. */
export interface Frame {
  n: number;
  event: string | undefined;
  id: string | undefined;
  data: string;
  /** The data parsed, when it is a JSON object (undefined for `[DONE]` and for anything else). */
  json: Record<string, unknown> | undefined;
}

/**
 * The rules, by stable id (printed, and matched by tests and by scripts reading `--json`).
 * `sse/*` and `done/*` hold for every surface; `chat/*`, `responses/*`, `messages/*` and `media/*` for one.
 */
export type RuleId =
  | 'sse/syntax'
  | 'sse/unterminated'
  | 'sse/json'
  | 'sse/id-unique'
  | 'stream/empty'
  | 'done/missing'
  | 'done/after'
  | 'chat/frame-kind'
  | 'chat/stable-id'
  | 'chat/role-first'
  | 'chat/tool-call-index'
  | 'chat/tool-call-first-delta'
  | 'chat/finish-once'
  | 'chat/after-finish'
  | 'chat/usage-after-finish'
  | 'chat/error-then-done'
  | 'responses/event-type'
  | 'responses/sequence'
  | 'responses/created-first'
  | 'responses/added-done'
  | 'responses/terminal'
  | 'responses/stable-id'
  | 'messages/event-type'
  | 'messages/start-first'
  | 'messages/blocks'
  | 'messages/terminal'
  | 'media/event-type'
  | 'media/terminal';

export interface Violation {
  /** The frame that breaks the rule, or null for what only the end of the stream shows. */
  frame: number | null;
  rule: RuleId;
  message: string;
}

export type Report = (frame: number | null, rule: RuleId, message: string) => void;

/** One family of rules, fed every frame in order, then told the stream ended. */
export interface RuleFamily {
  frame(frame: Frame, report: Report): void;
  end(report: Report): void;
}

export { asObject } from '../as-object.ts';

import { asObject, type Frame } from './types.ts';

/** The accounting profile's named events (reference/accounting-events.txt), and its closing envelope. */
const ACCOUNTING_EVENTS = new Set([
  'usage_start',
  'usage_final',
  'rate_limit_warning',
  'cache_hit',
  'provider_fallback',
  'response.done',
]);

export type ChatFrame =
  | { kind: 'done' }
  | { kind: 'chunk'; chunk: Record<string, unknown>; choices: Record<string, unknown>[] }
  /** `data: {"error":…}`, `event: error`, or the accounting profile's `{"type":"error"}`. */
  | { kind: 'error'; payload: Record<string, unknown> }
  /** `x_*` vendor data, which clients skip (reference/chat-streaming-full.txt). */
  | { kind: 'vendor' }
  | { kind: 'accounting'; name: string; payload: Record<string, unknown> }
  /** Not JSON (already reported), or JSON that is none of the above. */
  | { kind: 'other' };

/** What a chat-completions frame is, by its event name and payload. */
export function classifyChatFrame(f: Frame): ChatFrame {
  if (f.data === '[DONE]') return { kind: 'done' };
  const json = f.json;
  if (!json) return { kind: 'other' };
  const type = typeof json.type === 'string' ? json.type : undefined;
  if (f.event === 'error' || asObject(json.error) || (type === 'error' && !Array.isArray(json.choices))) {
    return { kind: 'error', payload: json };
  }
  if (f.event?.startsWith('x_') || type?.startsWith('x_')) return { kind: 'vendor' };
  const name = f.event !== undefined && ACCOUNTING_EVENTS.has(f.event) ? f.event : type;
  if (name !== undefined && ACCOUNTING_EVENTS.has(name)) return { kind: 'accounting', name, payload: json };
  if (Array.isArray(json.choices)) {
    return { kind: 'chunk', chunk: json, choices: json.choices.map((c) => asObject(c) ?? {}) };
  }
  return { kind: 'other' };
}

/** Whether a delta carries output: any field but `role` with a value (`content: ""` on the role chunk does not). */
export function carriesOutput(delta: Record<string, unknown>): boolean {
  for (const [key, value] of Object.entries(delta)) {
    if (key === 'role' || value === null || value === undefined || value === '') continue;
    if (Array.isArray(value) && value.length === 0) continue;
    return true;
  }
  return false;
}

/** A choice's index, when it is one (a whole number from 0). */
export function choiceIndex(choice: Record<string, unknown>): number | undefined {
  const i = choice.index;
  return typeof i === 'number' && Number.isInteger(i) && i >= 0 ? i : undefined;
}

/**
 * The Responses stream grammar a relayed stream must keep whatever the upstream sends: each
 * frame's `event:` line is its payload's `type`, and `sequence_number` counts the frames from 0
 * by one (the openai SDK and the Agents SDK read both). Older upstreams omit the event line or
 * the number, so sluice puts them back. A frame that already says both right, as OpenAI's do,
 * goes on byte for byte; only a frame that needs it is parsed, and changed no more than that.
 */
export interface RelayedFrame {
  event?: string;
  data: string;
}

/**
 * Whether a frame already says it right: its `event:` line, as the SSE parser read it, is the type
 * its payload starts with, and its `sequence_number` is `sequence`. Checked on the text before any
 * parse (most frames need none), against where OpenAI writes them: `type` first, `sequence_number`
 * second or last (newer models), where the closing brace shows it belongs to the event, not to a
 * nested object. Anything else is parsed (normalizeRelayedFrame).
 */
function saysIt(frame: RelayedFrame, sequence: number): boolean {
  const { event, data } = frame;
  if (event === undefined || !data.startsWith(TYPE) || !data.startsWith(event, TYPE.length)) return false;
  const end = TYPE.length + event.length;
  // The name ends where the payload's string does (a quote or backslash in it is escaped there: parsed).
  if (data.charCodeAt(end) !== QUOTE || event.includes('"') || event.includes('\\')) return false;
  if (data.startsWith(NUMBER, end + 1) && numberAt(data, end + 1 + NUMBER.length) === sequence) return true;
  // Numbered last: the digits before the closing brace, after the key.
  if (data.charCodeAt(data.length - 1) !== CLOSE) return false;
  let start = data.length - 1;
  while (start > end && isDigit(data.charCodeAt(start - 1))) start--;
  return data.startsWith(NUMBER, start - NUMBER.length) && numberAt(data, start) === sequence;
}

const TYPE = '{"type":"';
const NUMBER = ',"sequence_number":';
const QUOTE = 0x22;
const COMMA = 0x2c;
const CLOSE = 0x7d;

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/** The unsigned integer written at `at` and ended by `,` or `}`, or -1 (none, or it goes on). */
function numberAt(data: string, at: number): number {
  let value = 0;
  let i = at;
  for (; isDigit(data.charCodeAt(i)); i++) value = value * 10 + (data.charCodeAt(i) - 0x30);
  const next = data.charCodeAt(i);
  return i > at && (next === COMMA || next === CLOSE) ? value : -1;
}

/**
 * The frame numbered `sequence` as the client receives it. A payload that is not a JSON object
 * with a string `type` is not an event sluice can name: it is relayed as it came.
 */
export function normalizeRelayedFrame(frame: RelayedFrame, sequence: number): RelayedFrame {
  if (saysIt(frame, sequence)) return frame;
  let payload: unknown;
  try {
    payload = JSON.parse(frame.data);
  } catch {
    return frame;
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return frame;
  const { type, sequence_number: numbered, ...fields } = payload as Record<string, unknown>;
  if (typeof type !== 'string' || /[\r\n]/.test(type)) return frame;
  if (numbered === sequence) return { event: type, data: frame.data };
  // A missing number goes in after the type, the rest left byte for byte (`1.0` stays `1.0`).
  const head = `{"type":${JSON.stringify(type)}`;
  if (numbered === undefined && frame.data.startsWith(head)) {
    return { event: type, data: `${head},"sequence_number":${sequence}${frame.data.slice(head.length)}` };
  }
  return { event: type, data: JSON.stringify({ type, sequence_number: sequence, ...fields }) };
}

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
 * A cheap check before any parse: OpenAI writes `type` first and `sequence_number` second, or
 * last (newer models), where the closing brace shows it belongs to the event, not to a nested object.
 */
const TYPE_FIRST = /^\{"type":"([^"\\]+)"/;
const NUMBER_SECOND = /^\{"type":"[^"\\]+","sequence_number":(\d+)[,}]/;
const NUMBER_LAST = /,"sequence_number":(\d+)\}$/;

function peek(data: string): { type: string; sequence: number } | null {
  const type = TYPE_FIRST.exec(data)?.[1];
  const sequence = (NUMBER_SECOND.exec(data) ?? NUMBER_LAST.exec(data))?.[1];
  return type === undefined || sequence === undefined ? null : { type, sequence: Number(sequence) };
}

/**
 * The frame numbered `sequence` as the client receives it. A payload that is not a JSON object
 * with a string `type` is not an event sluice can name: it is relayed as it came.
 */
export function normalizeRelayedFrame(frame: RelayedFrame, sequence: number): RelayedFrame {
  const seen = peek(frame.data);
  if (seen && frame.event === seen.type && seen.sequence === sequence) return frame;
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

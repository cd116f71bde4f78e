import type { StreamFrame } from './types.ts';

/** The upstream's own word on a failure, when it came from one (sluice's `error.upstream`). */
export interface UpstreamDetail {
  status: number | null;
  type: string | null;
  code: string | null;
}

/**
 * A stream that ended in an error frame: sluice's (or the upstream's) message, type and code, as
 * the frame carried them. `event` is the frame's `event:` name when it was a named frame.
 */
export class SluiceStreamError extends Error {
  override readonly name = 'SluiceStreamError';
  readonly type: string | undefined;
  readonly code: string | undefined;
  readonly param: string | undefined;
  readonly upstream: UpstreamDetail | undefined;
  readonly event: string | undefined;
  /** The frame's payload, unchanged. */
  readonly data: Record<string, unknown>;

  constructor(message: string, fields: Omit<SluiceStreamError, keyof Error | 'name'>) {
    super(message);
    this.type = fields.type;
    this.code = fields.code;
    this.param = fields.param;
    this.upstream = fields.upstream;
    this.event = fields.event;
    this.data = fields.data;
  }
}

/** A body that is not a readable event stream (not SSE, or a frame whose data is not JSON). */
export class SluiceProtocolError extends Error {
  override readonly name = 'SluiceProtocolError';
}

/**
 * The error a frame carries, or undefined. Every error shape sluice writes:
 * - chat completions: `data: {"error":{message,type,code,param?,upstream?}}` (also as `event: error`);
 * - the accounting profile: `data: {"type":"error","data":"<message>","code",...}`;
 * - Responses: `event: error` with `{"type":"error","error":{...}}` (OpenAI's own: code/message at the top);
 * - Messages: `event: error` with `{"type":"error","error":{"type","message"}}`;
 * - a `response.failed` without its `error` event: the response's `error` object.
 */
export function errorOfFrame(frame: StreamFrame): SluiceStreamError | undefined {
  const { event } = frame;
  // A failed response whose `error` event a relay left out: its error object says the same.
  const failed = frame.data.type === 'response.failed' && isObject(frame.data.response) ? frame.data.response : undefined;
  const data = failed && isObject(failed.error) ? { error: failed.error } : frame.data;
  const isError = event === 'error' || data.type === 'error' || (isObject(data.error) && data.choices === undefined);
  if (!isError) return undefined;
  const inner = isObject(data.error) ? data.error : data;
  const message =
    text(inner.message) ?? text(data.message) ?? (typeof data.data === 'string' ? data.data : undefined) ?? 'stream error';
  return new SluiceStreamError(message, {
    type: inner === data ? undefined : text(inner.type),
    code: text(inner.code) ?? text(data.code),
    param: text(inner.param) ?? text(data.param),
    upstream: upstreamOf(inner.upstream ?? data.upstream),
    event,
    data: frame.data,
  });
}

function upstreamOf(value: unknown): UpstreamDetail | undefined {
  if (!isObject(value)) return undefined;
  return {
    status: typeof value.status === 'number' ? value.status : null,
    type: text(value.type) ?? null,
    code: value.code === null || value.code === undefined ? null : String(value.code),
  };
}

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

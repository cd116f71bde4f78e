import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { accumulateAccountingEvent, accumulateChatChunk } from './accumulate-chat.ts';
import { accumulateMessagesEvent, type BlockTools } from './accumulate-messages.ts';
import { accumulateResponsesEvent } from './accumulate-responses.ts';
import { classifyFrame, endsStream } from './classify-frame.ts';
import { errorOfFrame, isObject, SluiceProtocolError, SluiceStreamError } from './errors.ts';
import { emptyMessage, type StreamFrame, type StreamMessage } from './types.ts';

export interface StreamHandlers {
  /** Every frame, in order, once parsed (pings and vendor events included; `[DONE]` and comments not). */
  onFrame?: (frame: StreamFrame) => void;
  /** A piece of the answer's text, as it arrives. */
  onText?: (delta: string, message: StreamMessage) => void;
  /** A piece of the reasoning, as it arrives. */
  onReasoning?: (delta: string, message: StreamMessage) => void;
  /** An `x_*` vendor event (sent when the endpoint passes them through), unchanged. */
  onVendorEvent?: (event: Record<string, unknown>, frame: StreamFrame) => void;
  /** An accounting event: usage_start, rate_limit_warning, provider_fallback, cache_hit, usage_final, response.done. */
  onAccountingEvent?: (event: Record<string, unknown>, frame: StreamFrame) => void;
}

/**
 * Reads a sluice stream from a `fetch` Response to its end and resolves with the accumulated
 * message. Chat completions (either profile), Responses and Messages streams are told apart by
 * their frames. Throws SluiceStreamError for an error frame (or an HTTP error answer) and
 * SluiceProtocolError for a body that is not a whole event stream.
 */
export async function readStream(response: Response, handlers: StreamHandlers = {}): Promise<StreamMessage> {
  if (!response.ok) throw await httpError(response);
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/event-stream')) throw new SluiceProtocolError(`not an event stream: content-type ${type || 'none'}`);
  if (!response.body) throw new SluiceProtocolError('the response has no body');

  const reader = new StreamReader(handlers);
  const body = response.body.getReader();
  const decoder = new TextDecoder();
  try {
    while (!reader.finished) {
      const { done, value } = await body.read();
      if (done) break;
      reader.feed(decoder.decode(value, { stream: true }));
    }
    if (!reader.finished) reader.feed(decoder.decode());
  } finally {
    // Frames after the end marker are not read: the connection is let go at once.
    if (reader.finished) await body.cancel().catch(() => undefined);
  }
  return reader.result();
}

/**
 * The same reading of a stream's whole text, already at hand (a log, a recording): the
 * accumulated message, or the error its frames end in.
 */
export function readStreamText(text: string, handlers: StreamHandlers = {}): StreamMessage {
  const reader = new StreamReader(handlers);
  reader.feed(text);
  return reader.result();
}

class StreamReader {
  private readonly message = emptyMessage();
  private readonly tools: BlockTools = new Map();
  private readonly parser = createParser({
    onEvent: (e) => this.take(e),
    onError: (e) => this.fail(new SluiceProtocolError(`malformed event stream: ${e.message}`)),
  });
  private failure: Error | undefined;
  private ended = false;
  private readonly handlers: StreamHandlers;

  constructor(handlers: StreamHandlers) {
    this.handlers = handlers;
  }

  get finished(): boolean {
    return this.ended || this.failure !== undefined;
  }

  feed(text: string): void {
    this.parser.feed(text);
    if (this.failure) throw this.failure;
  }

  result(): StreamMessage {
    if (this.failure) throw this.failure;
    if (!this.ended)
      throw new SluiceProtocolError('the stream ended before its end marker ([DONE], message_stop or the response)');
    return this.message;
  }

  private fail(error: Error): void {
    this.failure ??= error;
  }

  private take(e: EventSourceMessage): void {
    if (this.finished) return;
    if (e.data === '[DONE]') return void (this.ended = true);
    let json: unknown;
    try {
      json = JSON.parse(e.data);
    } catch {
      return this.fail(new SluiceProtocolError(`a frame's data is not JSON: ${e.data.slice(0, 200)}`));
    }
    if (!isObject(json)) return this.fail(new SluiceProtocolError(`a frame's data is not an object: ${e.data.slice(0, 200)}`));
    const frame: StreamFrame = { event: e.event, id: e.id, data: json };
    this.handlers.onFrame?.(frame);
    const error = errorOfFrame(frame);
    if (error) return this.fail(error);
    this.route(frame);
    if (endsStream(frame)) this.ended = true;
  }

  private route(frame: StreamFrame): void {
    const m = this.message;
    const { text, reasoning } = m;
    switch (classifyFrame(frame)) {
      case 'vendor':
        return this.handlers.onVendorEvent?.(frame.data, frame);
      case 'accounting':
        accumulateAccountingEvent(m, frame.data);
        return this.handlers.onAccountingEvent?.(frame.data, frame);
      case 'chat':
        m.surface ??= 'chat';
        accumulateChatChunk(m, frame.data);
        break;
      case 'responses':
        m.surface ??= 'responses';
        accumulateResponsesEvent(m, frame.data);
        break;
      case 'messages':
        m.surface ??= 'messages';
        accumulateMessagesEvent(m, frame.data, this.tools);
        break;
      default:
        return;
    }
    if (m.text.length > text.length) this.handlers.onText?.(m.text.slice(text.length), m);
    if (m.reasoning.length > reasoning.length) this.handlers.onReasoning?.(m.reasoning.slice(reasoning.length), m);
  }
}

/** An answer that is an HTTP error: its error body (any surface's shape) as a SluiceStreamError. */
async function httpError(response: Response): Promise<SluiceStreamError> {
  const text = await response.text().catch(() => '');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const data = isObject(json) ? json : { error: { message: text || `HTTP ${response.status}` } };
  // Named `error`, any payload is read as one.
  return errorOfFrame({ event: 'error', id: undefined, data }) as SluiceStreamError;
}

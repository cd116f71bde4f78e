import { EventStreamCodec, type Message } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { errors } from '../../errors/catalog.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import type { StreamDecoder } from '../types.ts';
import { type ConverseEventDecoder, createConverseEventDecoder } from './decode-events.ts';

/** Prelude (total length, headers length, CRC) plus the trailing message CRC. */
const MIN_MESSAGE = 16;
/** The eventstream format caps a message at 16 MiB; a larger length is garbage, not a message. */
const MAX_MESSAGE = 16 * 1024 * 1024;

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/**
 * `application/vnd.amazon.eventstream` bytes -> canonical events. Each message starts with its
 * total length; bytes are held until a whole message is in, which the codec then decodes
 * (checking both CRCs). A bad message, an exception message, or an incomplete message at the end
 * of the body is an error event, after which the rest is ignored.
 */
export function createBedrockStreamDecoder(provider: string): StreamDecoder {
  const events = createConverseEventDecoder(provider);
  let pending: Buffer = Buffer.alloc(0);
  // Reads that came while the message at the head of `pending` was incomplete, joined once it is
  // whole: joining on every read copies a large message once per read (quadratic; found by fuzz/).
  let waiting: Uint8Array[] = [];
  let waitingBytes = 0;
  // The length of that incomplete message (0: none).
  let needed = 0;
  let broken = false;

  const fail = (out: CanonicalEvent[], detail: string) => {
    broken = true;
    out.push({ type: 'error', error: errors.malformed(provider, detail) });
  };

  return {
    push(bytes) {
      const out: CanonicalEvent[] = [];
      if (broken) return out;
      if (needed > 0 && pending.length + waitingBytes + bytes.length < needed) {
        waiting.push(bytes);
        waitingBytes += bytes.length;
        return out;
      }
      pending = pending.length === 0 && waiting.length === 0 ? Buffer.from(bytes) : Buffer.concat([pending, ...waiting, bytes]);
      waiting = [];
      waitingBytes = 0;
      needed = 0;
      while (!broken && pending.length >= 4) {
        const total = pending.readUInt32BE(0);
        if (total < MIN_MESSAGE || total > MAX_MESSAGE) {
          fail(out, `eventstream message length ${total} is out of range`);
          break;
        }
        if (pending.length < total) {
          needed = total;
          break;
        }
        let message: Message;
        try {
          message = codec.decode(pending.subarray(0, total));
        } catch (err) {
          fail(out, `eventstream message is invalid: ${(err as Error).message}`);
          break;
        }
        pending = pending.subarray(total);
        if (handle(message, events, out)) broken = true;
      }
      return out;
    },
    end() {
      const out: CanonicalEvent[] = [];
      const left = pending.length + waitingBytes;
      if (!broken && left > 0) fail(out, `the body ended inside an eventstream message (${left} bytes left)`);
      return out;
    },
  };

  /** Returns true when the message ended the stream (exception or error). */
  function handle(message: Message, decoder: ConverseEventDecoder, out: CanonicalEvent[]): boolean {
    const header = (name: string) => {
      const h = message.headers[name];
      return h?.type === 'string' ? h.value : undefined;
    };
    const kind = header(':message-type');
    // AWS's generic eventstream error: the code and message travel as headers.
    if (kind === 'error') {
      decoder.exception(header(':error-code') ?? 'internalServerException', { message: header(':error-message') }, out);
      return true;
    }
    let payload: unknown;
    try {
      payload = message.body.length === 0 ? {} : JSON.parse(toUtf8(message.body));
    } catch {
      fail(out, `event payload is not JSON: ${toUtf8(message.body).slice(0, 120)}`);
      return true;
    }
    if (kind === 'exception') {
      decoder.exception(header(':exception-type') ?? 'internalServerException', payload, out);
      return true;
    }
    return decoder.event(header(':event-type') ?? '', payload, out);
  }
}

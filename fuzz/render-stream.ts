import { errors } from '../src/errors/catalog.ts';
import type { GatewayError } from '../src/errors/gateway-error.ts';
import type { CanonicalEvent } from '../src/protocol/canonical/events.ts';
import type { Usage } from '../src/protocol/canonical/usage.ts';
import { accountingTail, usageStartFrame } from '../src/surfaces/chat/accounting-frames.ts';
import { ChatChunkEncoder, type ChatChunkEncoderOptions } from '../src/surfaces/chat/encode-stream.ts';
import { ResponsesEventEncoder } from '../src/surfaces/responses/encode-stream.ts';
import { DONE_FRAME } from '../src/protocol/sse/frames.ts';
import type { ResponsesStreamChoices } from '../src/protocol/stream-profiles.ts';

/**
 * What the client receives for a list of canonical events, following the endings of
 * pipeline/run-stream.ts without its HTTP and timers: frames until the first error or the end
 * marker; then the closing frames if every started output finished, else the error frames (the
 * event's error, or `upstream_stream_truncated`); then `[DONE]`.
 */
interface Rendered {
  body: string;
  failure: GatewayError | null;
}

interface SurfaceModel {
  encode(event: CanonicalEvent): string;
  readonly complete: boolean;
  opening(): string;
  closing(usage: Usage | null): string;
  failure(error: GatewayError, usage: Usage | null): string;
}

function render(events: readonly CanonicalEvent[], surface: SurfaceModel): Rendered {
  let frames = '';
  let failure: GatewayError | null = null;
  let usage: Usage | null = null;
  let opened = false;
  for (const event of events) {
    if (event.type === 'error') {
      failure = event.error;
      break;
    }
    if (event.type === 'end') break;
    if (event.type === 'usage') usage = event.usage;
    const out = surface.encode(event);
    if (out && !opened) {
      opened = true;
      frames += surface.opening();
    }
    frames += out;
  }
  if (!failure && !surface.complete) failure = errors.truncated('up');
  frames += failure ? surface.failure(failure, usage) : surface.closing(usage);
  return { body: frames + DONE_FRAME, failure };
}

const NO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, source: 'estimated' };

export function renderChat(events: readonly CanonicalEvent[], options: ChatChunkEncoderOptions): Rendered {
  const encoder = new ChatChunkEncoder(options);
  const identity = { requestId: 'req1', provider: options.provider, model: 'm' };
  const accounting = options.stream.frames === 'accounting';
  return render(events, {
    encode: (e) => encoder.encode(e),
    get complete() {
      return encoder.complete;
    },
    opening: () => (accounting ? usageStartFrame(identity, 0) : ''),
    closing: (usage) =>
      accounting ? accountingTail(identity, usage ?? NO_USAGE, 0, 1) : encoder.usageFrame(usage ?? NO_USAGE, 0),
    failure: (error) => encoder.errorFrame(error),
  });
}

/** `choices`: a stream profile's (protocol/stream-profiles.ts), OpenAI's by default. */
export function renderResponses(events: readonly CanonicalEvent[], choices?: ResponsesStreamChoices): Rendered {
  const encoder = new ResponsesEventEncoder(
    {
      id: 'resp_r1',
      createdAt: 1_700_000_000,
      model: 'up/m',
      request: { model: 'up/m', input: 'hi' },
    },
    choices,
  );
  return render(events, {
    encode: (e) => encoder.encode(e),
    get complete() {
      return encoder.finished;
    },
    opening: () => '',
    closing: (usage) => encoder.closing(usage ?? NO_USAGE),
    failure: (error, usage) => encoder.failure(error, usage),
  });
}

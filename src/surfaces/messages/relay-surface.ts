import type { Accountant } from '../../accounting/accountant.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import type { MessagesEventEncoder } from './encode-stream.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import type { MessagesEdge, MessagesRelayItem } from '../../providers/types.ts';
import type { StreamSurface } from '../../pipeline/run-stream.ts';

/**
 * A Messages stream relayed from Anthropic: the upstream's frames go out as they came; the events
 * decoded beside them feed the accountant, and what the frames open and close (their edges, as the
 * SSE parser and each frame's JSON read them, never the relayed text) tells when the message is
 * whole and what a budget stop must close. A failure the upstream reported (`event: error`) has
 * reached the client already; one of the stream itself (cut, undecodable) gets sluice's own frame.
 */
export class MessagesRelaySurface implements StreamSurface<MessagesRelayItem> {
  failure: GatewayError | null = null;
  complete = false;
  /** The upstream's end is its connection closing (after message_stop). */
  readonly ended = false;
  private readonly accountant: Accountant;
  private readonly encoder: MessagesEventEncoder;
  private told = false;
  /** What the relayed frames opened, which a budget stop must close. */
  private started = false;
  private openBlock: number | null = null;
  private stopping = false;

  /** `encoder` renders sluice's own frames: an error, or the end of a message its budget stopped. */
  constructor(accountant: Accountant, encoder: MessagesEventEncoder) {
    this.accountant = accountant;
    this.encoder = encoder;
  }

  encode(item: MessagesRelayItem): string {
    if ('text' in item) return item.text;
    if ('edge' in item) {
      this.follow(item.edge);
      return '';
    }
    const { event } = item;
    this.accountant.observe(event);
    if (event.type === 'error') {
      this.failure = event.error;
      this.told = item.told === true;
    }
    return '';
  }

  async opening(): Promise<string> {
    return '';
  }

  /** A budget stop's message_delta (stop_reason max_tokens, the usage so far) and message_stop. */
  async closing(signal: AbortSignal): Promise<string> {
    if (!this.stopping) return '';
    this.encoder.encode({ type: 'finish', choice: 0, reason: 'length' });
    return this.encoder.closing(await this.accountant.usage(signal));
  }

  async failureFrames(error: GatewayError): Promise<string> {
    return this.errorFrames(error);
  }

  /** The output bytes of a read, from the events decoded beside its frames: what a budget watch prices. */
  measure(items: readonly MessagesRelayItem[]): number {
    let bytes = 0;
    for (const item of items) if ('event' in item) bytes += outputBytes(item.event);
    return bytes;
  }

  /**
   * The budget ends the message before this read: the block the relayed frames left open stops
   * (and a message whose message_start was in this very read starts, as sluice's).
   */
  stop(): string {
    this.stopping = true;
    let frames = '';
    if (!this.started) {
      const usage = this.accountant.reportedUsage ?? { inputTokens: 0, outputTokens: 0, source: 'estimated' as const };
      frames += this.encoder.start(usage);
    }
    if (this.openBlock !== null) {
      const stop = { type: 'content_block_stop', index: this.openBlock };
      frames += `event: content_block_stop\ndata: ${JSON.stringify(stop)}\n\n`;
    }
    this.openBlock = null;
    return frames;
  }

  /** What the relayed frames opened and closed, as the relay decoded them (providers/anthropic/relay-messages.ts). */
  private follow(edge: MessagesEdge): void {
    switch (edge.type) {
      case 'message_start':
        this.started = true;
        break;
      case 'content_block_start':
        this.openBlock = edge.index;
        break;
      case 'content_block_stop':
        this.openBlock = null;
        break;
      case 'message_stop':
        // The message is whole at message_stop: a stream cut after message_delta is still a
        // truncated one, which gets sluice's error frame.
        this.complete = true;
        break;
    }
  }

  errorFrames(error: GatewayError): string {
    return this.told ? '' : this.encoder.failure(error);
  }
}

/** The UTF-8 bytes of model output an event carries. */
function outputBytes(event: CanonicalEvent): number {
  switch (event.type) {
    case 'text':
    case 'reasoning':
    case 'refusal':
      return Buffer.byteLength(event.text, 'utf8');
    case 'tool-call-start':
      return Buffer.byteLength(event.name, 'utf8');
    case 'tool-call-delta':
      return Buffer.byteLength(event.arguments, 'utf8');
    default:
      return 0;
  }
}

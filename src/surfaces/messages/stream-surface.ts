import type { Accountant } from '../../accounting/accountant.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import type { Usage } from '../../protocol/canonical/usage.ts';
import { CanonicalSurface } from '../../pipeline/run-stream.ts';
import type { MessagesEventEncoder } from './encode-stream.ts';

/** The Messages event surface over canonical events (every provider but Anthropic, which is relayed). */
export class MessagesStreamSurface extends CanonicalSurface {
  private readonly encoder: MessagesEventEncoder;

  constructor(encoder: MessagesEventEncoder, accountant: Accountant) {
    super(accountant);
    this.encoder = encoder;
  }

  get complete(): boolean {
    return this.encoder.finished;
  }

  protected render(event: CanonicalEvent): string {
    return this.encoder.encode(event);
  }

  /**
   * `message_start` with the input usage known when the upstream answered: the provider's when
   * its first read reported it (Anthropic-style upstreams, Bedrock's metadata comes last), else
   * sluice's own count of the prompt (the figure the final usage keeps if none is reported).
   */
  async opening(signal: AbortSignal): Promise<string> {
    const reported = this.accountant.reportedUsage;
    const usage: Usage =
      reported && reported.inputTokens > 0
        ? reported
        : { inputTokens: await this.accountant.inputTokens(signal), outputTokens: 0, source: 'estimated' };
    return this.encoder.start(usage);
  }

  async closing(signal: AbortSignal): Promise<string> {
    return this.encoder.closing(await this.accountant.usage(signal));
  }

  /** Anthropic's `event: error` carries no usage: the ledger has it. */
  async failureFrames(error: GatewayError): Promise<string> {
    return this.encoder.failure(error);
  }

  errorFrames(error: GatewayError): string {
    return this.encoder.failure(error);
  }
}

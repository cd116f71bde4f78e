import type { Accountant } from '../../accounting/accountant.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import {
  type AccountingIdentity,
  accountingTail,
  type LimitWarning,
  providerFallbackFrame,
  rateLimitWarningFrame,
  usageStartFrame,
} from './accounting-frames.ts';
import { ChatChunkEncoder, type ChatChunkEncoderOptions } from './encode-stream.ts';
import { CanonicalSurface } from '../../pipeline/run-stream.ts';

/** The chat.completion.chunk surface, in the openai or accounting profile. */
export class ChatStreamSurface extends CanonicalSurface {
  private readonly encoder: ChatChunkEncoder;
  private identity: AccountingIdentity;
  private readonly accounting: boolean;
  private readonly warning: LimitWarning | undefined;
  private readonly reportsInputFirst: (provider: string) => boolean;

  /** `reportsInputFirst`: whether a provider's first stream event reports the input tokens (ProviderAdapter). */
  constructor(
    options: ChatChunkEncoderOptions,
    accountant: Accountant,
    identity: AccountingIdentity,
    warning?: LimitWarning,
    reportsInputFirst: (provider: string) => boolean = () => false,
  ) {
    super(accountant);
    this.encoder = new ChatChunkEncoder(options);
    this.identity = identity;
    this.accounting = options.stream.frames === 'accounting';
    this.warning = warning;
    this.reportsInputFirst = reportsInputFirst;
  }

  get complete(): boolean {
    return this.encoder.complete;
  }

  protected render(event: CanonicalEvent): string {
    if (event.type === 'fallback') {
      // Routing moved to another target before the first token: the frames name the one used.
      this.identity = { ...this.identity, provider: event.to.provider, model: event.to.model };
      this.encoder.encode(event);
      return this.accounting ? providerFallbackFrame(this.identity.requestId, event) : '';
    }
    return this.encoder.encode(event);
  }

  /**
   * The accounting profile's usage_start goes out as soon as the upstream accepts the request,
   * with sluice's count of the input; or, from a provider whose first event reports the input
   * (Anthropic's message_start, sent at once), with that event and the provider's count: the
   * reference's `input_tokens` is "as reported by the provider's first SSE event".
   */
  get openOnAcknowledge(): boolean {
    return this.accounting && !this.reportsInputFirst(this.accountant.target.provider);
  }

  async opening(signal: AbortSignal): Promise<string> {
    if (!this.accounting) return '';
    // Routing may have left a refusing target already: usage_start names the one that accepted
    // (its provider_fallback frame follows, with the switch's first events).
    this.identity = { ...this.identity, ...this.accountant.target };
    const input = await this.accountant.startInput(signal);
    const start = usageStartFrame(this.identity, input.tokens, input.estimated);
    return this.warning ? start + rateLimitWarningFrame(this.identity, this.warning) : start;
  }

  async closing(signal: AbortSignal): Promise<string> {
    const usage = await this.accountant.usage(signal);
    const { costUsd } = this.accountant.cost(usage);
    if (this.accounting) return accountingTail(this.identity, usage, costUsd, Date.now() - this.accountant.startedAt);
    return this.encoder.usageFrame(usage, costUsd);
  }

  /**
   * The usage chunk so far (openai profile, when the client gets usage), then the error frame. The
   * accounting profile sends no usage_final on a failure (reference/accounting-events.txt: the
   * error frame comes in its place), so its error frame carries the usage so far itself.
   */
  async failureFrames(error: GatewayError, signal: AbortSignal | undefined): Promise<string> {
    const usage = await this.accountant.failedUsage(signal);
    const { costUsd } = this.accountant.cost(usage);
    if (this.accounting) {
      const latencyMs = Date.now() - this.accountant.startedAt;
      return this.encoder.errorFrame(error, { usage, costUsd, latencyMs });
    }
    return this.encoder.usageFrame(usage, costUsd) + this.encoder.errorFrame(error);
  }

  errorFrames(error: GatewayError): string {
    return this.encoder.errorFrame(error);
  }
}

import type { Accountant } from '../../accounting/accountant.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import type { ResponsesEventEncoder } from './encode-stream.ts';
import { CanonicalSurface } from '../../pipeline/run-stream.ts';

/** The Responses event surface over canonical events (every provider but relayed ones). */
export class ResponsesStreamSurface extends CanonicalSurface {
  private readonly encoder: ResponsesEventEncoder;

  constructor(encoder: ResponsesEventEncoder, accountant: Accountant) {
    super(accountant);
    this.encoder = encoder;
  }

  get complete(): boolean {
    return this.encoder.finished;
  }

  protected render(event: CanonicalEvent): string {
    return this.encoder.encode(event);
  }

  async opening(): Promise<string> {
    return '';
  }

  async closing(signal: AbortSignal): Promise<string> {
    return this.encoder.closing(await this.accountant.usage(signal));
  }

  /** `error`, then response.failed carrying the usage so far (what the ledger records). */
  async failureFrames(error: GatewayError, signal: AbortSignal | undefined): Promise<string> {
    return this.encoder.failure(error, await this.accountant.failedUsage(signal));
  }

  errorFrames(error: GatewayError): string {
    return this.encoder.failure(error, this.accountant.reportedUsage);
  }
}

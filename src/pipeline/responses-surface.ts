import type { Accountant } from '../accounting/accountant.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import type { ResponsesEventEncoder } from '../protocol/openai-responses/encode-events.ts';
import type { StreamSurface } from './run-stream.ts';

/** The Responses event surface over canonical events (every provider but relayed ones). */
export class ResponsesStreamSurface implements StreamSurface<CanonicalEvent> {
  failure: GatewayError | null = null;
  private readonly encoder: ResponsesEventEncoder;
  private readonly accountant: Accountant;

  constructor(encoder: ResponsesEventEncoder, accountant: Accountant) {
    this.encoder = encoder;
    this.accountant = accountant;
  }

  get complete(): boolean {
    return this.encoder.finished;
  }

  encode(event: CanonicalEvent): string {
    this.accountant.observe(event);
    if (event.type === 'error') {
      this.failure = event.error;
      return '';
    }
    return this.encoder.encode(event);
  }

  async opening(): Promise<string> {
    return '';
  }

  async closing(): Promise<string> {
    return this.encoder.closing(await this.accountant.usage());
  }

  failureFrames(error: GatewayError): string {
    return this.encoder.failure(error, this.accountant.reportedUsage);
  }
}

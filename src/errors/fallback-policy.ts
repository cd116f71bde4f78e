import type { GatewayError } from './gateway-error.ts';

/**
 * Whether a failure before the first output token may be answered by trying another target, and
 * why (the reason that `provider_fallback` frames and the ledger's attempts show). The status
 * policy (upstream-error.ts) already marks each upstream error `fallbackable`: 408/429/5xx,
 * refused credentials and billing may fall back; a bad request (400/404/422) would fail the same
 * way anywhere and is returned as it is. Failures of the stream itself (a reset, an undecodable
 * or truncated stream, silence) are the target's. The client's cancellation and sluice's own
 * deadline are nobody's target's fault: nothing is tried after them. Null: do not fall back.
 */
export function fallbackReason(error: GatewayError): string | null {
  switch (error.code) {
    case 'cancelled':
    case 'timeout':
    case 'internal_error':
      return null;
    case 'upstream_connection_error':
      return 'connection_error';
    case 'upstream_stream_truncated':
    case 'upstream_malformed_stream':
      return 'stream_failed';
    case 'stream_idle_timeout':
    case 'upstream_timeout':
      return 'timeout';
    case 'upstream_overloaded':
      return 'overloaded';
    case 'upstream_authentication_failed':
    case 'upstream_billing_error':
      return 'upstream_account';
  }
  if (!error.fallbackable) return null;
  return error.status === 429 ? 'rate_limited' : 'upstream_error';
}

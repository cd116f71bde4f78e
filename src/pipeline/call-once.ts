import { type GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import type { Exchange } from './exchange.ts';
import type { RequestScope } from './request-scope.ts';

export type Outcome<T> = { ok: true; value: T } | { ok: false; failure: GatewayError };

/**
 * A non-streaming upstream call under the request's scope (its deadline and the client's
 * disconnect abort it). On failure the surface's HTTP error is sent here.
 */
export async function callOnce<T>(
  exchange: Exchange,
  scope: RequestScope,
  call: (signal: AbortSignal) => Promise<T>,
): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await call(scope.signal) };
  } catch (err) {
    const failure = toGatewayError(scope.signal.aborted ? scope.signal.reason : err);
    exchange.sendError(failure);
    return { ok: false, failure };
  }
}

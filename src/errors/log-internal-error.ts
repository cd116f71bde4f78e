import { GatewayError } from './gateway-error.ts';

/** Where sluice's own log lines go (stderr in production, a collector in tests). */
export type LogLine = (message: string) => void;

/**
 * A sluice bug (what toGatewayError turns into `internal_error`) is logged once, where the request
 * id is known, with the stack: the client only reads "sluice internal error". A GatewayError that
 * wraps the throw (toGatewayError keeps it as `cause`) is logged by its cause, whose stack points
 * at the bug rather than at the wrapping.
 */
export function logInternalError(log: LogLine, requestId: string, err: unknown): void {
  const original = err instanceof GatewayError && err.cause !== undefined ? err.cause : err;
  const detail = original instanceof Error ? (original.stack ?? `${original.name}: ${original.message}`) : String(original);
  log(`internal error in request ${requestId}: ${detail}`);
}

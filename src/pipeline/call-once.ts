import type { ServerResponse } from 'node:http';
import { type GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import { StreamSession } from '../protocol/sse/stream-session.ts';
import { sendError } from '../server/http-io.ts';

export type Outcome<T> = { ok: true; value: T } | { ok: false; failure: GatewayError };

export interface CallScope {
  requestId: string;
  deadlineMs: number;
  /** Open sessions, so that a shutdown ends a long non-streaming call too (after the drain). */
  sessions: Set<StreamSession>;
}

/**
 * A non-streaming upstream call with what a stream gets for free: the request deadline and an
 * abort when the client goes away. On failure the HTTP error is sent here.
 */
export async function callOnce<T>(
  res: ServerResponse,
  { requestId, deadlineMs, sessions }: CallScope,
  call: (signal: AbortSignal) => Promise<T>,
): Promise<Outcome<T>> {
  // The session only lends its deadline and disconnect signal; it never writes SSE here.
  const scope = new StreamSession(res, { requestId, heartbeatMs: 0, idleTimeoutMs: 0, deadlineMs });
  sessions.add(scope);
  try {
    return { ok: true, value: await call(scope.signal) };
  } catch (err) {
    const failure = toGatewayError(scope.signal.aborted ? scope.signal.reason : err);
    sendError(res, failure, requestId);
    return { ok: false, failure };
  } finally {
    sessions.delete(scope);
    scope.dispose();
  }
}

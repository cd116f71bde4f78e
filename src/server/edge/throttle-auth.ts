import type { IncomingMessage } from 'node:http';
import { errors } from '../../errors/catalog.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { presentedKey } from '../../governance/keys/authenticate.ts';
import { KEY_PREFIX, parseKey } from '../../governance/keys/key-format.ts';
import type { Authenticate, Caller } from '../../admission/admission.ts';
import { FailureBuckets } from './failure-buckets.ts';

export interface AuthThrottleOptions {
  /** `auth.failures_per_minute` (0: no throttle). */
  failuresPerMinute: number;
  /** The client's key for per-client limits (client-address.ts: the forwarded client behind a trusted proxy). */
  clientOf: (req: IncomingMessage) => string;
  /** Told each wrong key, and each request answered 429 by this throttle (GET /metrics). */
  counters?: { failed(): void; throttled(scope: 'address' | 'key_id'): void };
  now?: () => number;
}

/**
 * Wrong keys cost their senders: past `failuresPerMinute` wrong keys (401 invalid_api_key) from
 * one client, or for one key id, the next are answered 429 `too_many_auth_failures` with
 * Retry-After, in the surface's error shape (the authenticate step's errors are rendered by the
 * route). Without it, 300 wrong console logins ran in 0.25 s, bearer keys the same.
 *
 * - A client over its limit is refused before its credential is checked, unless the credential
 *   is a well-formed sluice key (`sk-sluice-<id>_<secret>`): a 256-bit secret cannot be guessed,
 *   so checking it tells nothing, and a right one still passes. Clients sharing an address (a
 *   NAT, a proxy not declared trusted) keep working with their keys while one of them is
 *   throttled; what is refused unchecked is what can be guessed: the master key, malformed keys,
 *   and requests without a key (a session cookie).
 * - A key id over its limit answers its wrong secrets 429, and never refuses its right secret:
 *   key ids are not secret (the request log shows them), so refusing it would let anyone lock a
 *   key out.
 * - Missing keys are not failures, nor revoked or expired keys (their secret matched).
 *
 * The success path: with no recent failure anywhere (both tables empty) one size test; with
 * some, the client's address is worked out and looked up in a Map (~0.3 µs). An asynchronous
 * authentication (a key not cached, a session) gets a rejection handler on its promise.
 */
export function throttleAuthFailures(authenticate: Authenticate, options: AuthThrottleOptions): Authenticate {
  return authThrottle(options)(authenticate);
}

/**
 * The throttle as a wrapper, so that several ways of authenticating (a key route's, an admin
 * route's, which reads the key from the store) share one pair of tables: a client guessing keys
 * is throttled the same whichever route it guesses on.
 */
export function authThrottle(options: AuthThrottleOptions): (authenticate: Authenticate) => Authenticate {
  const limit = options.failuresPerMinute;
  if (limit === 0) return (authenticate) => authenticate;
  const now = options.now ?? Date.now;
  const byClient = new FailureBuckets(limit);
  const byKeyId = new FailureBuckets(limit);

  function refuseUnchecked(req: IncomingMessage): void {
    if (byClient.size === 0) return;
    const wait = byClient.retryAfterMs(options.clientOf(req), now());
    if (wait === 0 || keyIdOf(req) !== undefined) return;
    options.counters?.throttled('address');
    throw errors.authThrottled('address', wait);
  }

  function failed(req: IncomingMessage, err: unknown): never {
    if (!(err instanceof GatewayError) || err.code !== 'invalid_api_key') throw err;
    options.counters?.failed();
    const t = now();
    const client = options.clientOf(req);
    const keyId = keyIdOf(req);
    // The waits as they stood before this failure: the failure that fills a bucket is still a 401.
    const keyWait = keyId === undefined ? 0 : byKeyId.retryAfterMs(keyId, t);
    const clientWait = byClient.retryAfterMs(client, t);
    byClient.fail(client, t);
    if (keyId !== undefined) byKeyId.fail(keyId, t);
    const [scope, wait] = keyWait > 0 ? (['key_id', keyWait] as const) : (['address', clientWait] as const);
    if (wait === 0) throw err;
    options.counters?.throttled(scope);
    throw errors.authThrottled(scope, wait);
  }

  return (authenticate) => (req) => {
    refuseUnchecked(req);
    let caller: Caller | Promise<Caller>;
    try {
      caller = authenticate(req);
    } catch (err) {
      failed(req, err);
    }
    return caller instanceof Promise ? caller.catch((err: unknown) => failed(req, err)) : caller;
  };
}

/** The key id of a well-formed sluice key presented by the request; undefined for anything else. */
function keyIdOf(req: IncomingMessage): string | undefined {
  const presented = presentedKey(req);
  return presented?.startsWith(KEY_PREFIX) ? parseKey(presented)?.keyId : undefined;
}

import type { IncomingHttpHeaders } from 'node:http';
import type { PoolKeyConfig } from '../../config/schema.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { retryAfterMs } from '../../upstream/retry-after.ts';
import { chooseKey, type KeyChoice, type KeyState, usableAt } from './choose-key.ts';
import { readRateLimitHeaders } from './rate-limit-headers.ts';

/** A 429 that names no wait still sets its key aside this long: the next request tries another key. */
const DEFAULT_COOLDOWN_MS = 10_000;
const MINUTE_MS = 60_000;

/** One configured key of a pool without the secret (which its adapter holds). */
type PoolKeySettings = Pick<PoolKeyConfig, 'label' | 'weight' | 'rpm' | 'tpm'>;

/** A key as /metrics and /readyz show it: never the key itself. */
export interface PoolKeyView {
  label: string;
  state: 'available' | 'cooling' | 'limited' | 'removed';
  /** Cooling or limited: milliseconds until it may be used again. */
  usableInMs?: number;
  /** Removed: the upstream's status (401, 403) and what it said. */
  removed?: { status: number; message: string };
}

/**
 * The keys of one provider and what each has been told, in this process (not shared between
 * instances: each learns from the answers it gets). A request takes a key (`take`), and its
 * answers feed the key back: the rate-limit headers (`learn`), the tokens it used (`charge`), a 429
 * or a refusal (`refused`).
 */
export class KeyPool {
  readonly provider: string;
  private readonly keys: KeyState[];
  private readonly log: (line: string) => void;
  private readonly clock: () => number;

  constructor(provider: string, keys: readonly PoolKeySettings[], log: (line: string) => void, clock: () => number = Date.now) {
    this.provider = provider;
    this.log = log;
    this.clock = clock;
    this.keys = keys.map((k) => ({
      ...k,
      window: { start: clock(), requests: 0, tokens: 0 },
      learned: {},
      coolingUntil: 0,
      removed: null,
    }));
  }

  /** The key for one try of a request (counted against its own per-minute limit), or why there is none. */
  take(affinity: string | undefined, exclude: ReadonlySet<string>): KeyChoice {
    const now = this.clock();
    const choice = chooseKey(this.keys, { now, affinity, exclude });
    if (choice.key) this.windowOf(choice.key, now).requests++;
    return choice;
  }

  /** The upstream's `x-ratelimit-*` headers of an answer given to `label` (any status). */
  learn(label: string, headers: IncomingHttpHeaders | Record<string, string>): void {
    const key = this.find(label);
    if (!key) return;
    const learned = readRateLimitHeaders(headers, this.clock());
    if (learned.requests) key.learned.requests = learned.requests;
    if (learned.tokens) key.learned.tokens = learned.tokens;
  }

  /** Tokens a request sent with `label` used, against its configured tokens a minute. */
  charge(label: string, tokens: number): void {
    const key = this.find(label);
    if (key && tokens > 0) this.windowOf(key, this.clock()).tokens += tokens;
  }

  /**
   * The upstream refused a request sent with `label`: a 429 sets the key aside for its Retry-After,
   * a 401 or 403 takes it out (logged once). True when the refusal was the key's, so another key
   * may answer the same request; false for any other failure.
   */
  refused(label: string, error: GatewayError): boolean {
    const key = this.find(label);
    const status = error.upstreamStatus;
    if (!key || status === undefined) return false;
    if (status === 429) {
      const wait = retryAfterMs(error.headers) ?? DEFAULT_COOLDOWN_MS;
      key.coolingUntil = Math.max(key.coolingUntil, this.clock() + wait);
      return true;
    }
    if (status === 401 || status === 403) {
      if (!key.removed) {
        key.removed = { status, message: error.message };
        this.log(
          `provider ${this.provider}: key '${label}' taken out of the pool: the upstream answered ${status} (${error.message}); reload the config once it is fixed.`,
        );
      }
      return true;
    }
    return false;
  }

  /** The error of a request no key can take now: the upstream's own shape of a 429 or a refusal, for routing to fall back on. */
  unavailable(choice: KeyChoice & { key: null }): GatewayError {
    if (choice.removed) {
      return new GatewayError({
        code: 'upstream_authentication_failed',
        status: 502,
        type: 'upstream_error',
        provider: this.provider,
        message: `${this.provider} refused every key of its pool (401/403); see the log and /readyz.`,
        fallbackable: true,
      });
    }
    const seconds = Math.max(1, Math.ceil((choice.until - this.clock()) / 1000));
    return new GatewayError({
      code: 'rate_limit_exceeded',
      status: 429,
      type: 'rate_limit_error',
      provider: this.provider,
      message: `Every key of ${this.provider} is at its rate limit or cooling down; the first is free again in ${seconds} s.`,
      headers: { 'retry-after': String(seconds) },
      retryable: true,
      fallbackable: true,
    });
  }

  view(): PoolKeyView[] {
    const now = this.clock();
    return this.keys.map((key) => {
      if (key.removed) return { label: key.label, state: 'removed', removed: key.removed };
      const at = usableAt(key, now);
      if (at <= now) return { label: key.label, state: 'available' };
      return { label: key.label, state: key.coolingUntil > now ? 'cooling' : 'limited', usableInMs: at - now };
    });
  }

  private find(label: string): KeyState | undefined {
    return this.keys.find((k) => k.label === label);
  }

  /** The key's current minute: a new one once the last is over. */
  private windowOf(key: KeyState, now: number): KeyState['window'] {
    if (now >= key.window.start + MINUTE_MS) key.window = { start: now, requests: 0, tokens: 0 };
    return key.window;
  }
}

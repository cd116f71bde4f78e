import type { LearnedLimits } from './rate-limit-headers.ts';
import { rendezvous } from './sticky-hash.ts';

const MINUTE_MS = 60_000;

/** One key of a provider's pool as the choice sees it: its share, its limits, what it has been told. */
export interface KeyState {
  label: string;
  weight: number;
  /** Configured: requests and tokens a minute (undefined: no limit of sluice's own). */
  rpm?: number;
  tpm?: number;
  /** What the key spent in its current minute (the configured limits count against it). */
  window: { start: number; requests: number; tokens: number };
  /** What the upstream's x-ratelimit-* headers last said of this key. */
  learned: LearnedLimits;
  /** A 429 set it aside until then (epoch ms; 0: never). */
  coolingUntil: number;
  /** A 401 or 403 took it out: the status and the upstream's message. */
  removed: { status: number; message: string } | null;
}

/**
 * When the key may be used again: `now` or earlier when it may be now, Infinity when it was taken
 * out, else the latest of its cooldown, its configured minute (when full) and a learned limit's
 * reset (when the upstream said none is left).
 */
export function usableAt(key: KeyState, now: number): number {
  if (key.removed) return Infinity;
  let at = key.coolingUntil;
  const windowEnd = key.window.start + MINUTE_MS;
  if (now < windowEnd) {
    if (key.rpm !== undefined && key.window.requests >= key.rpm) at = Math.max(at, windowEnd);
    if (key.tpm !== undefined && key.window.tokens >= key.tpm) at = Math.max(at, windowEnd);
  }
  for (const limit of [key.learned.requests, key.learned.tokens]) {
    if (limit && limit.remaining <= 0 && limit.resetAt > now) at = Math.max(at, limit.resetAt);
  }
  return at;
}

export type KeyChoice =
  | { key: KeyState }
  /** No key may be used now: every one is taken out (`removed`), or the soonest is free at `until`. */
  | { key: null; removed: true }
  | { key: null; removed: false; until: number };

export interface ChooseOptions {
  now: number;
  /** prompt_cache_key, user or session: the same affinity gets the same usable key. */
  affinity?: string;
  /** Labels already tried by this request. */
  exclude?: ReadonlySet<string>;
  /** [0, 1): injected by tests. */
  random?: () => number;
}

/**
 * The key a request goes out with: among the keys usable now (not taken out, not cooling down,
 * within their own limits), the one its affinity hashes to, else one drawn by weight.
 */
export function chooseKey(keys: readonly KeyState[], options: ChooseOptions): KeyChoice {
  const { now, exclude } = options;
  const candidates = exclude ? keys.filter((k) => !exclude.has(k.label)) : keys;
  const usable = candidates.filter((k) => usableAt(k, now) <= now);
  if (usable.length === 0) {
    const until = Math.min(...candidates.map((k) => usableAt(k, now)));
    return until === Infinity ? { key: null, removed: true } : { key: null, removed: false, until };
  }
  if (usable.length === 1) return { key: usable[0] };
  if (options.affinity !== undefined) {
    return {
      key: rendezvous(
        usable,
        options.affinity,
        (k) => k.label,
        (k) => k.weight,
      ),
    };
  }
  const total = usable.reduce((sum, k) => sum + k.weight, 0);
  let at = (options.random ?? Math.random)() * total;
  for (const key of usable) {
    at -= key.weight;
    if (at < 0) return { key };
  }
  return { key: usable[usable.length - 1] };
}

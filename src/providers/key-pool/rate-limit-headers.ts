/** What an upstream said is left of one of a key's limits, and when it is whole again. */
export interface LimitState {
  remaining: number;
  /** Epoch ms when the limit resets (the upstream's reset, read against `now`). */
  resetAt: number;
}

/** The limits an upstream's `x-ratelimit-*` headers describe: requests and tokens, each when present. */
export interface LearnedLimits {
  requests?: LimitState;
  tokens?: LimitState;
}

/** A reset further away than this is a misreading, not a limit: a key is never set aside longer on it. */
const MAX_RESET_MS = 10 * 60_000;

/**
 * Reads OpenAI's rate-limit headers (`x-ratelimit-remaining-requests` with
 * `x-ratelimit-reset-requests`, and the same for tokens), which OpenAI-compatible servers (Groq,
 * Together, OpenRouter, vLLM's proxies) also send. A reset is a duration (`1s`, `6m0s`, `20ms`,
 * `1h2m3.5s`), a number of seconds, or an HTTP or ISO date. A limit whose headers are missing or
 * unreadable is left out: nothing is learned from it.
 */
export function readRateLimitHeaders(headers: Readonly<Record<string, unknown>>, now: number): LearnedLimits {
  const out: LearnedLimits = {};
  for (const kind of ['requests', 'tokens'] as const) {
    const remaining = Number(text(headers[`x-ratelimit-remaining-${kind}`]));
    const resetMs = resetIn(text(headers[`x-ratelimit-reset-${kind}`]), now);
    if (text(headers[`x-ratelimit-remaining-${kind}`]) === '' || !Number.isFinite(remaining) || remaining < 0) continue;
    if (resetMs === null) continue;
    out[kind] = { remaining, resetAt: now + resetMs };
  }
  return out;
}

function text(value: unknown): string {
  if (Array.isArray(value)) return text(value[0]);
  return typeof value === 'string' ? value.trim() : '';
}

const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

/** Milliseconds until the reset the header names; null when it names none. */
export function resetIn(value: string, now: number): number | null {
  if (value === '') return null;
  let ms: number | null = null;
  if (/^\d+(\.\d+)?$/.test(value)) ms = Number(value) * 1000;
  else if (/^(\d+(\.\d+)?(ms|h|m|s))+$/.test(value)) {
    ms = 0;
    for (const [, amount, unit] of value.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) ms += Number(amount) * UNIT_MS[unit];
  } else {
    const at = Date.parse(value);
    if (!Number.isNaN(at)) ms = Math.max(0, at - now);
  }
  return ms === null ? null : Math.min(ms, MAX_RESET_MS);
}

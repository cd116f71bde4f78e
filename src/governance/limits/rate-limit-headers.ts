/** Where one limit stood after this request was counted. */
export interface LimitState {
  limit: number;
  remaining: number;
  /** Until the window resets (for a concurrency limit: 0, it has no window). */
  resetMs: number;
}

/** The binding state of each kind of limit (the key's or the project's, whichever has less left). */
export interface LimitStates {
  requests?: LimitState;
  tokens?: LimitState;
  concurrency?: LimitState;
}

/**
 * The headers every response of a limited request carries, refusals included:
 * - OpenAI's `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (the reset as OpenAI writes
 *   it: `1s`, `6m0s`, `20ms`), which clients built for OpenAI already read;
 * - the IETF fields of draft-ietf-httpapi-ratelimit-headers (-11): `RateLimit-Policy:
 *   "requests";q=60;w=60` and `RateLimit: "requests";r=59;t=42`, Structured Field lists. Only
 *   the registered quota units are used (requests, concurrent-requests): tokens have no
 *   registered unit, so they appear in the OpenAI headers only.
 */
export function rateLimitHeaders(states: LimitStates): Record<string, string> {
  const headers: Record<string, string> = {};
  const policies: string[] = [];
  const current: string[] = [];
  const { requests, tokens, concurrency } = states;
  if (requests) {
    openAiHeaders(headers, 'requests', requests);
    policies.push(`"requests";q=${requests.limit};w=60`);
    current.push(`"requests";r=${requests.remaining};t=${Math.ceil(requests.resetMs / 1000)}`);
  }
  if (tokens) openAiHeaders(headers, 'tokens', tokens);
  if (concurrency) {
    policies.push(`"concurrency";q=${concurrency.limit};qu="concurrent-requests"`);
    current.push(`"concurrency";r=${concurrency.remaining}`);
  }
  if (policies.length > 0) {
    headers['ratelimit-policy'] = policies.join(', ');
    headers.ratelimit = current.join(', ');
  }
  return headers;
}

function openAiHeaders(headers: Record<string, string>, kind: 'requests' | 'tokens', state: LimitState): void {
  headers[`x-ratelimit-limit-${kind}`] = String(state.limit);
  headers[`x-ratelimit-remaining-${kind}`] = String(state.remaining);
  headers[`x-ratelimit-reset-${kind}`] = formatResetDuration(state.resetMs);
}

/** `Retry-After` in whole seconds (at least 1) and the openai SDK's `retry-after-ms`. */
export function retryAfterHeaders(ms: number): Record<string, string> {
  const wait = Math.max(1, Math.ceil(ms));
  return { 'retry-after': String(Math.ceil(wait / 1000)), 'retry-after-ms': String(wait) };
}

/** A duration as OpenAI's x-ratelimit-reset-* write it: `20ms`, `1.5s`, `6m0s`, `1h2m3s`. */
export function formatResetDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const seconds = (total % 60_000) / 1000;
  const s = `${Number(seconds.toFixed(3))}s`;
  if (hours > 0) return `${hours}h${minutes}m${s}`;
  if (minutes > 0) return `${minutes}m${s}`;
  return s;
}

/** The state with less left of two (a key's and its project's), or whichever exists. */
export function tighter(a: LimitState | undefined, b: LimitState | undefined): LimitState | undefined {
  if (!a) return b;
  if (!b) return a;
  return b.remaining < a.remaining ? b : a;
}

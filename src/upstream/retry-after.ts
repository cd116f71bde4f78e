/** The longest cooldown a Retry-After may impose on a target (a bad header must not shut it for a day). */
const MAX_COOLDOWN_MS = 10 * 60_000;

/**
 * How long an upstream asked to be left alone, from the headers a GatewayError passed on:
 * `retry-after-ms` (OpenAI), else `retry-after` in seconds or as an HTTP date. Null when it did
 * not say, or said something unreadable.
 */
export function retryAfterMs(headers: Record<string, string>, now = Date.now()): number | null {
  const ms = Number(headers['retry-after-ms']);
  if (headers['retry-after-ms'] !== undefined && Number.isFinite(ms) && ms > 0) return Math.min(ms, MAX_COOLDOWN_MS);
  const value = headers['retry-after']?.trim();
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) {
    const seconds = Number(value);
    return seconds > 0 ? Math.min(seconds * 1000, MAX_COOLDOWN_MS) : null;
  }
  const at = Date.parse(value);
  if (Number.isNaN(at) || at <= now) return null;
  return Math.min(at - now, MAX_COOLDOWN_MS);
}

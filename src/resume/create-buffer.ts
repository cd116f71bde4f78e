import type { Config } from '../config/schema.ts';
import { MemoryStreamBuffer } from './memory-buffer.ts';
import { RedisStreamBuffer } from './redis-buffer.ts';
import type { StreamBuffer } from './stream-buffer.ts';

/**
 * The gateway's stream buffer (config stream.resume): none when resuming is off; in memory; or in
 * memory and Redis when limits.redis_url (or REDIS_URL) is set, so that any instance can serve a
 * resume.
 */
export function createStreamBuffer(config: Config, log: (message: string) => void): StreamBuffer | undefined {
  const resume = config.stream.resume;
  if (!resume.enabled) return undefined;
  const limits = { streams: resume.buffer_streams, bytes: resume.buffer_bytes, ttlMs: resume.ttl_s * 1000 };
  const url = config.limits.redis_url;
  if (!url) return new MemoryStreamBuffer(limits);
  return new RedisStreamBuffer(limits, {
    url,
    prefix: config.limits.redis_prefix,
    timeoutMs: config.limits.redis_timeout_ms,
    log,
  });
}

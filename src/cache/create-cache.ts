import type { Config } from '../config/schema.ts';
import type { CacheBackend } from './cache-backend.ts';
import { MemoryBackend } from './memory-backend.ts';
import { RedisBackend } from './redis-backend.ts';
import { ResponseCache } from './response-cache.ts';

/** The gateway's response cache, on the backend response_cache names (load-config.ts made sure Redis has a URL). */
export function createResponseCache(config: Config, log: (message: string) => void): ResponseCache {
  const settings = config.response_cache;
  const url = config.limits.redis_url;
  const backend: CacheBackend =
    settings.backend === 'redis' && url
      ? new RedisBackend({ url, prefix: config.limits.redis_prefix, timeoutMs: config.limits.redis_timeout_ms, log })
      : new MemoryBackend(settings.memory_max_bytes);
  return new ResponseCache(backend, { cacheLength: settings.cache_length, log });
}

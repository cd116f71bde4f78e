import { RedisLink } from '../store/redis-link.ts';
import type { CacheBackend } from './cache-backend.ts';

export interface RedisBackendOptions {
  url: string;
  prefix: string;
  timeoutMs: number;
  log: (message: string) => void;
}

/**
 * The cache of many instances: each answer is a Redis string `{prefix}cache:{key}` that expires at
 * its TTL. Redis bounds the whole by its own `maxmemory`, evicting by its policy: one that may
 * evict keys without a TTL too (`allkeys-lru`) would take the limits' buckets and reservations
 * with it, so a Redis shared with limits must use `volatile-lru` or `volatile-ttl`
 * (docs/operations/response-cache.md). A Redis that is away or slow is a miss, never an error:
 * the request goes upstream. `bytes` counts what this instance wrote; Redis counts its evictions.
 */
export class RedisBackend implements CacheBackend {
  private readonly link: RedisLink;
  private readonly prefix: string;
  private written = 0;

  constructor(options: RedisBackendOptions) {
    this.prefix = `${options.prefix}cache:`;
    this.link = new RedisLink({
      url: options.url,
      timeoutMs: options.timeoutMs,
      log: (message) => options.log(`response cache: ${message}`),
      meaning: { down: 'every request is a miss and goes upstream', up: 'answers are served from the cache again' },
    });
  }

  get stats(): { bytes: number; evictions: number } {
    return { bytes: this.written, evictions: 0 };
  }

  start(): Promise<void> {
    return this.link.start();
  }

  close(): Promise<void> {
    return this.link.close();
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.link.run((redis) => redis.get(this.prefix + key))) ?? undefined;
  }

  async has(key: string): Promise<boolean> {
    return (await this.link.run((redis) => redis.exists(this.prefix + key))) === 1;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.link.run((redis) => redis.set(this.prefix + key, value, { PX: Math.max(1, Math.round(ttlMs)) }));
    this.written += Buffer.byteLength(value, 'utf8');
  }
}

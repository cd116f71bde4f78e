/** Where the response cache keeps its answers (memory-backend.ts, redis-backend.ts): JSON text by key, with a TTL. */
export interface CacheBackend {
  get(key: string): Promise<string | undefined>;
  /** Whether an answer is there, without reading it (nor, in memory, making it recent). */
  has(key: string): Promise<boolean>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
  /** Bytes of answers held (in Redis: written by this instance), and answers evicted to make room. */
  readonly stats: { bytes: number; evictions: number };
  start?(): Promise<void>;
  close?(): Promise<void>;
}

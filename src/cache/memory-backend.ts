import type { CacheBackend } from './cache-backend.ts';

interface Entry {
  value: string;
  bytes: number;
  expiresAt: number;
}

/**
 * The cache of one instance: answers in memory, least recently used first out once their bytes
 * pass `maxBytes`, each dropped at its TTL (when next read, or when evicted). A Map keeps its keys
 * in insertion order: a read moves its entry to the end, so the first key is the least recent.
 */
export class MemoryBackend implements CacheBackend {
  private readonly entries = new Map<string, Entry>();
  private readonly maxBytes: number;
  private readonly now: () => number;
  private held = 0;
  private evicted = 0;

  constructor(maxBytes: number, now: () => number = Date.now) {
    this.maxBytes = maxBytes;
    this.now = now;
  }

  get stats(): { bytes: number; evictions: number } {
    return { bytes: this.held, evictions: this.evicted };
  }

  get(key: string): Promise<string | undefined> {
    return Promise.resolve(this.read(key));
  }

  has(key: string): Promise<boolean> {
    const entry = this.entries.get(key);
    return Promise.resolve(entry !== undefined && entry.expiresAt > this.now());
  }

  set(key: string, value: string, ttlMs: number): Promise<void> {
    this.remove(key);
    const bytes = Buffer.byteLength(value, 'utf8');
    // An answer larger than the whole cache would only empty it.
    if (bytes > this.maxBytes) return Promise.resolve();
    this.entries.set(key, { value, bytes, expiresAt: this.now() + ttlMs });
    this.held += bytes;
    for (const oldest of this.entries.keys()) {
      if (this.held <= this.maxBytes) break;
      this.remove(oldest);
      this.evicted++;
    }
    return Promise.resolve();
  }

  private read(key: string): string | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.remove(key);
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.held -= entry.bytes;
  }
}

export interface TtlCacheOptions<V> {
  /** Reads a value from the store (undefined: there is none, which is cached too). */
  load: (key: string) => Promise<V | undefined>;
  /** How long a loaded value (or its absence) is trusted; 0: every lookup loads. */
  ttlMs: number;
  /** Past this many entries the oldest loaded is dropped: a flood of unknown ids cannot grow memory. */
  maxEntries?: number;
  now?: () => number;
}

interface Slot<V> {
  value: V | undefined;
  until: number;
}

/**
 * What an instance remembers of the store between round trips (verified keys, endpoints), so
 * the hot path stays in memory: `peek` answers synchronously while an entry is fresh, `get` loads
 * otherwise, and concurrent misses for one id share a single load. Absence is cached like a value,
 * so repeating an unknown id does not cost a query each time. `delete` makes this instance forget
 * at once (a revocation here); other instances notice within the TTL.
 */
export class TtlCache<V> {
  private readonly options: TtlCacheOptions<V>;
  private readonly now: () => number;
  private readonly maxEntries: number;
  private readonly slots = new Map<string, Slot<V>>();
  private readonly loading = new Map<string, Promise<V | undefined>>();
  /** Bumped by delete(): a load started before it must not store what it read. */
  private generation = 0;

  constructor(options: TtlCacheOptions<V>) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.maxEntries = options.maxEntries ?? 10_000;
  }

  /** The fresh entry: `{ value }` (value undefined: known to be absent), or undefined when it must be loaded. */
  peek(key: string): { value: V | undefined } | undefined {
    const slot = this.slots.get(key);
    if (!slot) return undefined;
    if (slot.until > this.now()) return slot;
    this.slots.delete(key);
    return undefined;
  }

  async get(key: string): Promise<V | undefined> {
    const fresh = this.peek(key);
    if (fresh) return fresh.value;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.loadInto(key).finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  delete(key: string): void {
    this.generation++;
    this.slots.delete(key);
    this.loading.delete(key);
  }

  private async loadInto(key: string): Promise<V | undefined> {
    const generation = this.generation;
    const value = await this.options.load(key);
    if (this.options.ttlMs > 0 && generation === this.generation) {
      if (this.slots.size >= this.maxEntries) {
        const oldest = this.slots.keys().next().value;
        if (oldest !== undefined) this.slots.delete(oldest);
      }
      this.slots.set(key, { value, until: this.now() + this.options.ttlMs });
    }
    return value;
  }
}

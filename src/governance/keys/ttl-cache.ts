export interface TtlCacheOptions<V> {
  /** Reads a value from the store (undefined: there is none, which is cached too). */
  load: (key: string) => Promise<V | undefined>;
  /** How long a loaded value (or its absence) is trusted; 0: every lookup loads. */
  ttlMs: number;
  /** Past this many values the oldest loaded is dropped. */
  maxEntries?: number;
  /**
   * Past this many absent ids the oldest is dropped. Absences are kept apart from the values, so a
   * flood of unknown ids (random key ids, each a store query) can neither grow memory nor push the
   * keys in use out of the cache, which would cost each of their requests a query in turn.
   */
  maxAbsent?: number;
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
 * at once (a revocation, here or announced by another instance: governance.ts); the TTL bounds
 * what a change nobody announced (or whose announcement was lost) may take.
 */
export class TtlCache<V> {
  private readonly options: TtlCacheOptions<V>;
  private readonly now: () => number;
  private readonly maxEntries: number;
  private readonly maxAbsent: number;
  private readonly slots = new Map<string, Slot<V>>();
  private readonly absent = new Map<string, Slot<V>>();
  private readonly loading = new Map<string, Promise<V | undefined>>();
  /** Bumped by delete(): a load started before it must not store what it read. */
  private generation = 0;

  constructor(options: TtlCacheOptions<V>) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.maxAbsent = options.maxAbsent ?? 10_000;
  }

  /** The fresh entry: `{ value }` (value undefined: known to be absent), or undefined when it must be loaded. */
  peek(key: string): { value: V | undefined } | undefined {
    let map = this.slots;
    let slot = map.get(key);
    if (!slot) {
      map = this.absent;
      slot = map.get(key);
    }
    if (!slot) return undefined;
    if (slot.until > this.now()) return slot;
    map.delete(key);
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

  /** Reads the store now, whatever is cached, and caches what it read: for a check that must not trust the cache. */
  refresh(key: string): Promise<V | undefined> {
    return this.loadInto(key);
  }

  delete(key: string): void {
    this.generation++;
    this.slots.delete(key);
    this.absent.delete(key);
    this.loading.delete(key);
  }

  /** Forgets the values `match` picks (the keys of a project that changed), and any load under way. */
  deleteWhere(match: (key: string, value: V) => boolean): void {
    this.generation++;
    for (const [key, slot] of this.slots) if (slot.value !== undefined && match(key, slot.value)) this.slots.delete(key);
    this.loading.clear();
  }

  /** Forgets everything (changes may have been missed): each entry is read again on its next use. */
  clear(): void {
    this.generation++;
    this.slots.clear();
    this.absent.clear();
    this.loading.clear();
  }

  private async loadInto(key: string): Promise<V | undefined> {
    const generation = this.generation;
    const value = await this.options.load(key);
    if (this.options.ttlMs > 0 && generation === this.generation) {
      const [map, max] = value === undefined ? [this.absent, this.maxAbsent] : [this.slots, this.maxEntries];
      // A key that changed side (created, or gone) is kept on one side only.
      (value === undefined ? this.slots : this.absent).delete(key);
      if (map.size >= max) {
        const oldest = map.keys().next().value;
        if (oldest !== undefined) map.delete(oldest);
      }
      map.set(key, { value, until: this.now() + this.options.ttlMs });
    }
    return value;
  }
}

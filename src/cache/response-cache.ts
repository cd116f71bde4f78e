import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import type { CacheBackend } from './cache-backend.ts';
import type { CacheMode, CachePolicy } from './cache-policy.ts';
import { storableAnswer } from './storable-answer.ts';

/** What a response says of the cache (`x-sluice-cache`), and its ledger row (`response_cache`). */
export type CacheOutcome = 'hit' | 'miss' | 'bypass';

/**
 * One request's dealings with the cache, from its lookup to its end. A hit carries the answer to
 * replay through the surface's live encoders; a miss that may keep its answer is told the events
 * as they come (`keep`). Every slot is settled exactly once, when its request's ledger record is
 * final: that is when a complete answer is kept, and when requests waiting on it go on.
 */
export interface CacheSlot {
  readonly outcome: CacheOutcome;
  /** The request's tier or route opted in: its ledger row says the outcome (else null there). */
  readonly optedIn: boolean;
  /** A hit: the canonical events of the cached answer, in their order. */
  readonly answer?: readonly CanonicalEvent[];
  /** A miss whose answer may be kept: each batch of the answer's canonical events. */
  readonly keep?: (events: readonly CanonicalEvent[]) => void;
  /** The request ended; `succeeded`: its record is `ok` and its answer was whole (no budget stop). */
  settle(succeeded: boolean): void;
}

/** A request the cache does not serve: not opted in (`NOT_CACHED`), or asked to bypass it, or a relayed answer. */
export const NOT_CACHED: CacheSlot = Object.freeze({ outcome: 'bypass', optedIn: false, settle: () => {} });
export const BYPASS: CacheSlot = Object.freeze({ outcome: 'bypass', optedIn: true, settle: () => {} });

export interface ResponseCacheOptions {
  /** response_cache.cache_length: keep answers that finished by their output limit too. */
  cacheLength: boolean;
  log: (message: string) => void;
}

/** The cache's counters for /metrics. */
export interface ResponseCacheStats {
  hits: number;
  misses: number;
  bytes: number;
  evictions: number;
}

/**
 * The exact response cache (docs/operations/response-cache.md): a request's canonical answer by
 * its key (cache-key.ts), kept in a backend (memory, or Redis for many instances). Identical
 * requests that miss at once are coalesced: the first goes upstream, the others wait for its
 * answer and replay it; if it fails they go upstream on their own. Coalescing is per instance.
 */
export class ResponseCache {
  private readonly backend: CacheBackend;
  private readonly options: ResponseCacheOptions;
  /** Misses going upstream now, by key: what their followers wait on (undefined: no answer to share). */
  private readonly flights = new Map<string, Promise<readonly CanonicalEvent[] | undefined>>();
  private hits = 0;
  private misses = 0;

  constructor(backend: CacheBackend, options: ResponseCacheOptions) {
    this.backend = backend;
    this.options = options;
  }

  get stats(): ResponseCacheStats {
    return { hits: this.hits, misses: this.misses, ...this.backend.stats };
  }

  start(): Promise<void> {
    return this.backend.start?.() ?? Promise.resolve();
  }

  close(): Promise<void> {
    return this.backend.close?.() ?? Promise.resolve();
  }

  /** Whether a request of this key would be answered from the cache now, reading nothing else (a dry run). */
  async wouldHit(key: string): Promise<boolean> {
    return this.flights.has(key) || (await this.backend.has(key));
  }

  /**
   * The slot of a request under `policy`: a hit (stored, or the answer of an identical request in
   * flight), or a miss that keeps its answer. `refresh` skips the reading, not the keeping.
   */
  async lookup(key: string, policy: CachePolicy, mode: Exclude<CacheMode, 'bypass'>): Promise<CacheSlot> {
    if (mode === 'use') {
      const stored = await this.read(key);
      if (stored) return this.hit(stored);
      const flight = this.flights.get(key);
      if (flight) {
        const answer = await flight;
        // The leader failed: this request goes upstream on its own (and may keep its answer).
        return answer ? this.hit(structuredClone(answer)) : this.miss(key, policy, false);
      }
    }
    return this.miss(key, policy, !this.flights.has(key));
  }

  private hit(answer: readonly CanonicalEvent[]): CacheSlot {
    this.hits++;
    return { outcome: 'hit', optedIn: true, answer, settle: () => {} };
  }

  /** A miss: its answer is kept if whole; a leader (`leads`) is waited on by identical requests meanwhile. */
  private miss(key: string, policy: CachePolicy, leads: boolean): CacheSlot {
    this.misses++;
    const flight = leads ? openFlight() : undefined;
    if (flight) this.flights.set(key, flight.promise);
    const seen: CanonicalEvent[] = [];
    return {
      outcome: 'miss',
      optedIn: true,
      keep: (events) => {
        for (const event of events) seen.push(event);
      },
      settle: (succeeded) => {
        const answer = succeeded ? storableAnswer(seen, this.options.cacheLength) : undefined;
        const text = answer && JSON.stringify(answer);
        if (!answer || !text || Buffer.byteLength(text, 'utf8') > policy.maxBytes) {
          flight?.resolve(undefined);
          if (flight) this.land(key, flight.promise);
          return;
        }
        flight?.resolve(answer);
        const stored = this.backend.set(key, text, policy.ttlMs).catch((err: Error) => {
          this.options.log(`response cache: could not keep an answer: ${err.message}`);
        });
        // Kept in flight until the answer is stored: a request arriving meanwhile still finds it.
        if (flight) void stored.then(() => this.land(key, flight.promise));
      },
    };
  }

  /** The flight is over: removed unless a newer one took its place. */
  private land(key: string, flight: Promise<unknown>): void {
    if (this.flights.get(key) === flight) this.flights.delete(key);
  }

  private async read(key: string): Promise<readonly CanonicalEvent[] | undefined> {
    let text: string | undefined;
    try {
      text = await this.backend.get(key);
    } catch (err) {
      this.options.log(`response cache: could not read an answer (served as a miss): ${(err as Error).message}`);
      return undefined;
    }
    return text === undefined ? undefined : (JSON.parse(text) as CanonicalEvent[]);
  }
}

interface Flight {
  promise: Promise<readonly CanonicalEvent[] | undefined>;
  resolve: (answer: readonly CanonicalEvent[] | undefined) => void;
}

function openFlight(): Flight {
  let resolve: Flight['resolve'] = () => {};
  const promise = new Promise<readonly CanonicalEvent[] | undefined>((r) => (resolve = r));
  return { promise, resolve };
}

import { errors } from '../../errors/catalog.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { Authenticate } from '../../admission/admission.ts';
import { describeStoreError } from '../../store/classify-store-error.ts';
import { createAuthenticate, type VerifiedKey, verifiedKey } from './authenticate.ts';
import type { ChangeChannel, ChangeReceiver, GovernanceChange } from './governance-change.ts';
import type { Endpoint, GovernanceStore } from './governance-store.ts';
import { createSecretHasher, type SecretHasher } from './key-format.ts';
import { TtlCache } from './ttl-cache.ts';

export interface GovernanceOptions {
  masterKey: string | undefined;
  /** auth.key_pepper / SLUICE_KEY_PEPPER (key-format.ts). */
  pepper: string | undefined;
  /**
   * auth.key_cache_ttl_s, in ms: how long another instance's change may take to reach this one
   * when no channel carries it (a channel down, or none: one instance, one process).
   */
  cacheTtlMs: number;
  /** The config's default_tier, for keys and projects that name none. */
  defaultTier: string | null;
  log: (message: string) => void;
  now?: () => number;
}

/** Between two log lines about a failing store lookup (an outage would otherwise log every request). */
const LOG_EVERY_MS = 30_000;

/**
 * Keys, projects and endpoints of one gateway: the store (attached once the database is open),
 * what this instance caches of it, the authenticate steps built on them, and the channels that
 * carry a change made here to the other instances and workers (and theirs here), so that a
 * revoked key stops everywhere within a second rather than within the cache's TTL.
 */
export class Governance implements ChangeReceiver {
  readonly hash: SecretHasher;
  /** Verified keys by key id (absent: no such key). */
  readonly keys: TtlCache<VerifiedKey>;
  /** Endpoints by project and name (endpointCacheKey). */
  readonly endpoints: TtlCache<Endpoint>;
  readonly authenticate: Authenticate;
  /**
   * For the admin API (and the console, and /metrics): the calling key is read from the store,
   * never taken from the cache, so a key revoked a moment ago on another instance can do nothing
   * here, whether or not its revocation has arrived.
   */
  readonly authenticateAdmin: Authenticate;
  private readonly channels: ChangeChannel[] = [];
  private closed = false;
  private store: GovernanceStore | undefined;
  private readonly log: (message: string) => void;
  private readonly now: () => number;
  private loggedAt = Number.NEGATIVE_INFINITY;
  private defaultTier: string | null;

  constructor(options: GovernanceOptions) {
    this.log = options.log;
    this.defaultTier = options.defaultTier;
    this.now = options.now ?? Date.now;
    this.hash = createSecretHasher(options.pepper);
    this.keys = new TtlCache({
      ttlMs: options.cacheTtlMs,
      now: this.now,
      load: async (id) => {
        const found = await this.withStore((store) => store.findKeyWithProject(id));
        return found ? verifiedKey(found.key, found.project, this.defaultTier) : undefined;
      },
    });
    this.endpoints = new TtlCache({
      ttlMs: options.cacheTtlMs,
      now: this.now,
      load: (id) => {
        const [project, name] = id.split('\0');
        return this.withStore((store) => store.getEndpoint(project, name));
      },
    });
    const used = (id: string, at: number) => {
      this.store?.touchKey(id, at).catch((err: unknown) => this.logFailure('could not record the use of a key', err));
    };
    this.authenticate = createAuthenticate({
      masterKey: options.masterKey,
      keys: this.keys,
      hash: this.hash,
      now: this.now,
      used,
    });
    this.authenticateAdmin = createAuthenticate({
      masterKey: options.masterKey,
      keys: { peek: () => undefined, get: (id) => this.keys.refresh(id) },
      hash: this.hash,
      now: this.now,
      used,
    });
  }

  /** A channel to the other instances or workers: changes made here go out on it from now on (false: closed already). */
  connect(channel: ChangeChannel): boolean {
    if (this.closed) return false;
    this.channels.push(channel);
    return true;
  }

  /** A key or endpoint changed here: forgotten here at once, and announced to the other instances. */
  announce(change: GovernanceChange): void {
    this.changed(change);
    for (const channel of this.channels) channel.publish(change);
  }

  changed(change: GovernanceChange): void {
    if (change.kind === 'key') this.keys.delete(change.id);
    else if (change.kind === 'endpoint') this.endpoints.delete(endpointCacheKey(change.project, change.name));
    else {
      // Its keys carry its tier, budgets and models; its endpoints go with it when it is deleted.
      this.keys.deleteWhere((_, key) => key.caller.projectId === change.id);
      this.endpoints.deleteWhere((id) => id.startsWith(`${change.id}\0`));
    }
  }

  missed(): void {
    this.keys.clear();
    this.endpoints.clear();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.channels.map((channel) => channel.close()));
  }

  /**
   * A reloaded config's default_tier: the keys cached with the previous one are read again (a
   * verified key carries its tier), so that no key keeps the old default for a cache TTL.
   */
  setDefaultTier(tier: string | null): void {
    if (tier === this.defaultTier) return;
    this.defaultTier = tier;
    this.keys.clear();
  }

  attach(store: GovernanceStore): void {
    this.store = store;
  }

  /** The store, or a 503 while it is not open (a database down at start-up). */
  requireStore(): GovernanceStore {
    if (!this.store) throw errors.keyStoreUnavailable();
    return this.store;
  }

  /** The endpoint `name` of `project`, cached like keys. */
  endpoint(project: string, name: string): Promise<Endpoint | undefined> {
    return this.endpoints.get(endpointCacheKey(project, name));
  }

  /**
   * Work on the store: a database failure is a 503 for the client (never a 500 carrying driver
   * text) and a throttled log line; the GatewayErrors the work throws itself pass through.
   */
  async withStore<T>(work: (store: GovernanceStore) => Promise<T>): Promise<T> {
    const store = this.requireStore();
    try {
      return await work(store);
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      this.logFailure('a store query failed', err);
      throw errors.keyStoreUnavailable();
    }
  }

  private logFailure(what: string, err: unknown): void {
    const t = this.now();
    if (t - this.loggedAt < LOG_EVERY_MS) return;
    this.loggedAt = t;
    this.log(`governance: ${what}: ${describeStoreError(err)}`);
  }
}

/** NUL cannot occur in a decoded path parameter (route-table.ts), so the pair cannot be forged. */
function endpointCacheKey(project: string, name: string): string {
  return `${project}\0${name}`;
}

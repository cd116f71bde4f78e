import type { Config, TierConfig } from '../../config/schema.ts';
import type { Caller } from '../../admission/admission.ts';

/** Per-minute and in-flight limits of one subject (a key, or a project); undefined: unlimited. */
export interface RateLimits {
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  concurrentRequests?: number;
}

/** A budget of the tier, or of the key or project itself (Caller.budgets). */
export interface BudgetRule {
  scope: 'key' | 'project';
  period: 'day' | 'month';
  limitUsd: number;
}

/** A config tier, compiled once: what the admit step reads per request. */
export interface TierPolicy {
  name: string;
  /** Deadline and idle timeout (ms; 0: none), replacing the config's stream settings; undefined: the config's. */
  deadlineMs: number | undefined;
  idleTimeoutMs: number | undefined;
  key: RateLimits;
  project: RateLimits;
  budgets: readonly BudgetRule[];
  /** A stream the client abandoned: bill the tokens generated, or charge nothing. */
  abandoned: 'bill_generated' | 'void';
  /** What Redis being unreachable means for this tier's requests. */
  redisUnavailable: 'fail_open' | 'fail_closed';
  /** A stream the client left: abort the upstream, or read it to its end; undefined: the config's. */
  onDisconnect: 'cancel' | 'drain' | undefined;
  /** Any per-minute or concurrency limit at all (else the limiters are skipped). */
  limited: boolean;
}

export function compileTier(name: string, tier: TierConfig): TierPolicy {
  const key: RateLimits = {
    requestsPerMinute: tier.requests_per_minute,
    tokensPerMinute: tier.tokens_per_minute,
    concurrentRequests: tier.concurrent_requests,
  };
  const project: RateLimits = {
    requestsPerMinute: tier.project?.requests_per_minute,
    tokensPerMinute: tier.project?.tokens_per_minute,
    concurrentRequests: tier.project?.concurrent_requests,
  };
  const any = (l: RateLimits) =>
    l.requestsPerMinute !== undefined || l.tokensPerMinute !== undefined || l.concurrentRequests !== undefined;
  return {
    name,
    deadlineMs: tier.deadline_s === undefined ? undefined : tier.deadline_s * 1000,
    idleTimeoutMs: tier.idle_timeout_s === undefined ? undefined : tier.idle_timeout_s * 1000,
    key,
    project,
    budgets: tier.budgets.map((b) => ({ scope: b.scope, period: b.period, limitUsd: b.limit_usd })),
    abandoned: tier.abandoned_streams,
    redisUnavailable: tier.redis_unavailable,
    onDisconnect: tier.on_disconnect,
    limited: any(key) || any(project),
  };
}

/**
 * The tiers of the config by name. A caller's tier is the one its key (or project) names, else
 * `default_tier`; a name the config does not define falls back to the default too, and is
 * logged once (a key issued for a tier that was later removed from the config).
 */
export class TierBook {
  private readonly tiers = new Map<string, TierPolicy>();
  private readonly fallback: TierPolicy | undefined;
  private readonly unknown = new Set<string>();
  private readonly log: (message: string) => void;

  constructor(config: Pick<Config, 'tiers' | 'default_tier'>, log: (message: string) => void) {
    for (const [name, tier] of Object.entries(config.tiers)) this.tiers.set(name, compileTier(name, tier));
    this.fallback = config.default_tier === undefined ? undefined : this.tiers.get(config.default_tier);
    this.log = log;
  }

  get size(): number {
    return this.tiers.size;
  }

  of(caller: Caller): TierPolicy | undefined {
    if (caller.tier === null) return this.fallback;
    const tier = this.tiers.get(caller.tier);
    if (tier) return tier;
    if (!this.unknown.has(caller.tier)) {
      this.unknown.add(caller.tier);
      this.log(
        `limits: tier ${JSON.stringify(caller.tier)} is not in the config's tiers; its callers get ${this.fallback ? `the default tier ${this.fallback.name}` : 'no tier'}`,
      );
    }
    return this.fallback;
  }
}

/** "free" -> "Free": how a tier is named to a client ("Your Free tier has a 30-second timeout limit."). */
export function tierDisplayName(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

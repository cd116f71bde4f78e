import type { IncomingHttpHeaders } from 'node:http';
import type { CacheConfig, Config } from '../config/schema.ts';
import { errors } from '../errors/catalog.ts';

/** How a request opted in: how long its answer is kept, and the largest answer kept. */
export interface CachePolicy {
  ttlMs: number;
  maxBytes: number;
}

/**
 * The cache a request is under, the most specific setting first: its route's `cache` (what is
 * asked: how long that model's answers stay good and how large they may be holds whichever way
 * the request came), else the endpoint's it came through (where it is asked: one project's base
 * URL), else its tier's (who asks: the caller's own tier, else `default_tier`, shared by many
 * projects); undefined when none opted in. An unset setting defers to the next, so an endpoint
 * or a route can opt in but not opt out of a broader setting.
 */
export function cachePolicyOf(
  config: Config,
  tier: string | null,
  model: string,
  endpoint: CacheConfig | null = null,
): CachePolicy | undefined {
  const route = Object.hasOwn(config.routes, model) ? config.routes[model].cache : undefined;
  const tierName = tier ?? config.default_tier;
  const own =
    route ??
    endpoint ??
    (tierName !== undefined && Object.hasOwn(config.tiers, tierName) ? config.tiers[tierName].cache : undefined);
  return own && policyOf(own);
}

function policyOf(cache: CacheConfig): CachePolicy {
  return { ttlMs: cache.ttl_s * 1000, maxBytes: cache.max_bytes };
}

/**
 * What the client asks of the cache: `use` it (the default), `refresh` the answer (ask the
 * upstream, keep what it says: `Cache-Control: no-cache`, `x-sluice-cache: refresh`), or `bypass`
 * it (neither read nor written: `Cache-Control: no-store`, `x-sluice-cache: bypass`). When both
 * headers say something, the stronger wins (bypass over refresh).
 */
export type CacheMode = 'use' | 'refresh' | 'bypass';

export function cacheModeOf(headers: IncomingHttpHeaders): CacheMode {
  const own = headers['x-sluice-cache'];
  const ownMode = own === undefined ? 'use' : sluiceMode(Array.isArray(own) ? own.join(',') : own);
  const directives = new Set(
    (headers['cache-control'] ?? '')
      .split(',')
      .map((d) => d.trim().toLowerCase())
      .filter(Boolean),
  );
  if (ownMode === 'bypass' || directives.has('no-store')) return 'bypass';
  if (ownMode === 'refresh' || directives.has('no-cache')) return 'refresh';
  return 'use';
}

function sluiceMode(value: string): CacheMode {
  const mode = value.trim().toLowerCase();
  if (mode === 'bypass' || mode === 'refresh') return mode;
  throw errors.invalidRequest(`The x-sluice-cache header must be \`bypass\` or \`refresh\`, not \`${value}\`.`, 'x-sluice-cache');
}

import { type Kysely, sql } from 'kysely';
import type { Config } from '../config/schema.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import { classifyStoreError } from '../store/classify-store-error.ts';
import type { Database } from '../store/database.ts';
import { keyViews } from './provider-keys.ts';
import { NotReady, type ReadinessCheck } from './readiness.ts';

export interface ReadinessDeps {
  config: Config;
  registry: Pick<ProviderRegistry, 'providers' | 'keyPools'>;
  /** The store once it is open (it may open late: start-up retries it in the background). */
  database: () => Kysely<Database> | undefined;
  /** LimitsAndBudgets.pingRedis: undefined when no limit goes through Redis. */
  pingRedis: (() => Promise<void>) | undefined;
  /** The MCP gateway's upstream servers, each with its state (mcp/hub.ts). */
  mcp: () => Record<string, { state: string; reason?: string; tools: number }>;
}

/** What GET /readyz checks: the store, Redis and the providers (docs/operations/kubernetes.md). */
export function readinessChecks(deps: ReadinessDeps): Record<string, ReadinessCheck> {
  return {
    store: storeCheck(deps),
    redis: redisCheck(deps),
    providers: providersCheck(deps),
    provider_keys: providerKeysCheck(deps),
    mcp: mcpCheck(deps),
  };
}

/**
 * The keys of the providers' key pools (providers.<name>.api_keys): not required, as the other
 * keys (and the other targets) still answer; reported `down`, naming each key an upstream refused
 * (401/403) and took out, so that an operator sees it. Its states by provider and label otherwise.
 */
function providerKeysCheck({ registry }: ReadinessDeps): ReadinessCheck {
  if (registry.keyPools().size === 0) return { required: false, probe: undefined };
  return {
    required: false,
    async probe() {
      const views = keyViews(registry);
      const removed = views.filter((k) => k.removed).map((k) => `${k.provider}/${k.label} (${k.removed?.status})`);
      if (removed.length > 0) throw new NotReady(`removed after the upstream refused them: ${removed.join(', ')}`);
      const keys: Record<string, Record<string, string>> = {};
      for (const k of views) (keys[k.provider] ??= {})[k.label] = k.state;
      return { keys };
    },
  };
}

/**
 * The upstream MCP servers (mcp.servers): not required, as a server that is down hides only its
 * own tools; reported `down`, naming the servers, while any is not up, so that an operator sees it.
 */
function mcpCheck({ config, mcp }: ReadinessDeps): ReadinessCheck {
  if (Object.keys(config.mcp.servers).length === 0) return { required: false, probe: undefined };
  return {
    required: false,
    async probe() {
      const servers = mcp();
      const down = Object.keys(servers).filter((name) => servers[name].state !== 'up');
      if (down.length > 0) throw new NotReady(`not up: ${down.join(', ')}`);
      return { servers };
    },
  };
}

/**
 * The ledger's store answers a query: without it no record is written (they wait in memory), no
 * gateway-issued key can be checked and no budget read, so the gateway cannot serve.
 */
function storeCheck({ config, database }: ReadinessDeps): ReadinessCheck {
  if (!config.ledger.enabled) return { required: false, probe: undefined };
  const engine = config.store.database_url ? 'postgres' : 'sqlite';
  return {
    required: true,
    async probe() {
      const db = database();
      if (!db) throw new NotReady('not open yet (retried in the background)');
      try {
        await sql`select 1`.execute(db);
      } catch (err) {
        throw new NotReady(classifyStoreError(err) === 'connection' ? 'unreachable' : 'query failed');
      }
      return { engine };
    },
  };
}

/**
 * Redis, when limits go through it. Required only when a tier refuses without it
 * (`redis_unavailable: fail_closed`): with every tier failing open the gateway still serves,
 * without the shared limits, as the config asks, and marking every instance unready at once
 * would take the whole service down for nothing.
 */
function redisCheck({ config, pingRedis }: ReadinessDeps): ReadinessCheck {
  const required = Object.values(config.tiers).some((tier) => tier.redis_unavailable === 'fail_closed');
  if (!pingRedis) return { required, probe: undefined };
  return {
    required,
    async probe() {
      try {
        await pingRedis();
      } catch {
        throw new NotReady('unreachable');
      }
    },
  };
}

/**
 * At least one provider is enabled. The built-in mock is always there, so it counts only when
 * the config names it (`providers: { mock: {} }`): a deployment whose provider keys did not
 * arrive (a missing Secret) must not become ready and take traffic it can only refuse.
 */
function providersCheck({ config, registry }: ReadinessDeps): ReadinessCheck {
  return {
    required: true,
    async probe() {
      const enabled = registry.providers().filter((name) => name !== 'mock' || Object.hasOwn(config.providers, 'mock'));
      if (enabled.length === 0) throw new NotReady('no provider enabled (the mock counts only when providers names it)');
      return { enabled };
    },
  };
}

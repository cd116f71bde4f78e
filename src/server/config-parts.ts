import { PricingRegistry, providerKinds } from '../accounting/pricing.ts';
import type { Config } from '../config/schema.ts';
import { createProviderRegistry, type ProviderRegistry } from '../providers/registry.ts';
import type { HealthBook } from '../routing/health.ts';
import { createRouter, type Router } from '../routing/router.ts';
import type { UpstreamClient } from '../upstream/http-client.ts';

/** What a request resolves its model with and prices it by: built from the config, again on a reload. */
export interface ConfigParts {
  registry: ProviderRegistry;
  router: Router;
  pricing: PricingRegistry;
}

/**
 * The providers, the routes and the prices of a config, with the checks only they can make (a
 * declared server without base_url, a route target whose provider is not enabled): a ConfigError
 * listing every problem. Opens nothing (no connection, no store): `sluice config check` runs it
 * as the gateway's start and a reload do. `health`: the route targets' health to carry over; `log`: where a key pool tells of a key it takes out.
 */
export function buildConfigParts(
  config: Config,
  env: NodeJS.ProcessEnv,
  client: UpstreamClient,
  health?: HealthBook,
  log?: (line: string) => void,
): ConfigParts {
  const registry = createProviderRegistry(config, env, client, log);
  return {
    registry,
    router: createRouter(config, registry, health),
    pricing: new PricingRegistry(config.pricing, providerKinds(config.providers)),
  };
}

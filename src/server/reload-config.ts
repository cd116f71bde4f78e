import { ConfigError } from '../config/config-error.ts';
import { planReload } from '../config/reload-plan.ts';
import type { Config } from '../config/schema.ts';
import type { LimitsAndBudgets } from '../governance/admit.ts';
import type { Governance } from '../governance/keys/governance.ts';
import type { Logger } from '../telemetry/logger.ts';
import type { GatewayMetrics } from '../telemetry/metrics.ts';
import type { UpstreamClient } from '../upstream/http-client.ts';
import { buildConfigParts } from './config-parts.ts';
import type { GatewayContext } from './gateway-context.ts';
import type { ReloadResult } from './reload-result.ts';

/** Where a gateway reads its config again: the file, the environment and the flags it started with. */
export interface ReloadSource {
  /** The config as `sluice serve` would load it now; throws ConfigError. */
  load(): Config;
  /**
   * Problems that refuse a config this process cannot serve safely, beyond the gateway's own
   * checks (`sluice serve --workers N`: tiers whose limits only each worker's memory would hold).
   */
  refuse?(config: Config): string[];
}

/** The long-lived parts a reload reconfigures in place (their state outlives the config). */
export interface ReloadDeps {
  env: NodeJS.ProcessEnv;
  client: UpstreamClient;
  limits: LimitsAndBudgets;
  governance: Governance;
  logger: Logger;
  metrics: GatewayMetrics | undefined;
}

/**
 * Reads the config again and builds the context of the requests to come. Everything that can
 * fail (the file, the schema, the providers, the routes, `source.refuse`) runs before anything
 * running is touched: a refused config leaves the gateway as it was. The new context is a new
 * object sharing the running one's state (open scopes, the ledger, the stores, the key cache,
 * the limits' counters, the route targets' health): a request holds the context it started
 * with, so a stream under way keeps its registry, router and prices to its end, and the next
 * request reads the new ones. Logged and counted either way.
 */
export function reloadContext(
  running: GatewayContext,
  source: ReloadSource,
  deps: ReloadDeps,
): { context: GatewayContext | undefined; result: ReloadResult } {
  let context: GatewayContext;
  let plan: ReturnType<typeof planReload>;
  try {
    // A gateway that started with limits.redis_url but no tier never connected to Redis: tiers
    // added now would keep their limits in memory, unshared, until a restart connects it.
    const fixed = running.config.limits.redis_url && !deps.limits.inRedis ? [['tiers'], ['default_tier']] : [];
    plan = planReload(running.config, source.load(), fixed);
    const refused = source.refuse?.(plan.config) ?? [];
    if (refused.length > 0) throw new ConfigError(refused.join(' '), refused);
    const parts = buildConfigParts(plan.config, deps.env, deps.client, running.router.health, (line) => deps.logger.warn(line));
    context = {
      ...running,
      config: plan.config,
      registry: parts.registry,
      router: parts.router,
      accounting: { ...running.accounting, pricing: parts.pricing },
    };
    deps.limits.reconfigure(plan.config, parts.pricing);
  } catch (err) {
    const problems = err instanceof ConfigError ? [...err.problems] : [`internal error: ${(err as Error).message}`];
    deps.metrics?.configReloaded('refused');
    deps.logger.error(
      err instanceof ConfigError ? { problems } : { problems, err },
      'config reload refused: the running config is kept',
    );
    return { context: undefined, result: { ok: false, problems } };
  }
  deps.governance.setDefaultTier(plan.config.default_tier ?? null);
  deps.logger.level = plan.config.log.level;
  deps.metrics?.configReloaded('ok');
  const { changed, restartRequired } = plan;
  deps.logger.info({ changed }, changed.length > 0 ? 'config reloaded' : 'config reloaded: nothing changed');
  if (restartRequired.length > 0) {
    deps.logger.warn(
      { restart_required: restartRequired },
      'config reload: these keys keep their running values until a restart',
    );
  }
  return { context, result: { ok: true, changed, restartRequired } };
}

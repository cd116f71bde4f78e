import { ConfigError } from '../config/config-error.ts';
import type { Config } from '../config/schema.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import { HealthBook, type TargetHealthView } from './health.ts';
import { orderCandidates, type OrderOptions } from './order.ts';
import { type Candidate, planRoute, type RoutePlan } from './plan.ts';
import { resolveName } from './resolve-name.ts';

/** The lifecycle's resolve step: a name (and the request's own fallbacks) to the targets to try, in order. */
export interface Router {
  /** Throws a 404 (model_not_found) for a name nothing serves, before anything is sent. */
  plan(model: string, fallbacks?: readonly string[]): RoutePlan;
  order(plan: RoutePlan, options?: OrderOptions): Candidate[];
  /** Every route target (and any other target tried), for GET /healthz/providers. */
  healthView(): TargetHealthView[];
  /** A route or an alias of the config. */
  isPublicName(name: string): boolean;
  readonly health: HealthBook;
}

/**
 * Refuses, at start, a route with a target whose provider is not enabled (its key unset, a typo
 * in its name): such a route started silently, and every request to it then failed with a 404
 * before any of its other targets was tried. One ConfigError names each route, target and
 * provider, and how to enable the provider.
 */
export function refuseDisabledTargets(routes: Config['routes'], registry: Pick<ProviderRegistry, 'notEnabled'>): void {
  const problems: string[] = [];
  for (const [name, route] of Object.entries(routes)) {
    for (const [i, target] of route.targets.entries()) {
      const why = registry.notEnabled(target.model.slice(0, target.model.indexOf('/')));
      if (why) problems.push(`routes.${name}.targets[${i}] (${target.model}): ${why}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems.join(' '), problems);
}

/**
 * `health`: the book of the router this one replaces (a reload), which keeps what each target has
 * seen and takes this config's thresholds.
 */
export function createRouter(config: Config, registry: ProviderRegistry, health?: HealthBook): Router {
  refuseDisabledTargets(config.routes, registry);
  const publicNames = [...Object.keys(config.routes), ...config.model_list.map((m) => m.model_name)];
  const thresholds = { breakerFailures: config.routing.breaker_failures, breakerOpenMs: config.routing.breaker_open_s * 1000 };
  health?.tune(thresholds);
  const book = health ?? new HealthBook(thresholds);
  const routeTargets = [...new Set(Object.values(config.routes).flatMap((r) => r.targets.map((t) => t.model)))];
  const sources = { routes: config.routes, resolve: (name: string) => resolveName(registry, name, publicNames) };
  return {
    plan: (model, fallbacks = []) => planRoute(model, fallbacks, sources),
    order: (plan, options) => orderCandidates(plan, book, options),
    isPublicName: (name) => publicNames.includes(name),
    healthView: () => book.view(routeTargets),
    health: book,
  };
}

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

export function createRouter(config: Config, registry: ProviderRegistry, health?: HealthBook): Router {
  const publicNames = [...Object.keys(config.routes), ...config.model_list.map((m) => m.model_name)];
  const book =
    health ??
    new HealthBook({ breakerFailures: config.routing.breaker_failures, breakerOpenMs: config.routing.breaker_open_s * 1000 });
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

import type { RouteConfig, TargetParams } from '../config/schema.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { ResolvedModel } from '../providers/registry.ts';

/** One target a request may be sent to, with what the route says about it. */
export interface Candidate {
  target: ResolvedModel;
  /** `provider/model`: the key of its health. */
  key: string;
  weight: number;
  /** Abandon the attempt for the next target when no output came within this (0: no limit). */
  ttftTimeoutMs: number;
  /** Abandon a non-streamed attempt for the next target when its answer took longer than this (0: no limit). */
  answerTimeoutMs: number;
  /** Request parameters set in place of the client's. */
  params: TargetParams | undefined;
  /** The name the candidate came from (the route, an alias, an entry of `models`): what a key's allowed models see. */
  via: string;
}

/** The candidates of one request, before health and strategy order them. */
export interface RoutePlan {
  /** What the client named: echoed in responses and recorded as the requested model. */
  requested: string;
  strategy: RouteConfig['strategy'];
  sticky: boolean;
  /** The route's own targets (or the one the name resolves to), then the request's own fallbacks. */
  primary: Candidate[];
  fallbacks: Candidate[];
}

export interface PlanSources {
  routes: Record<string, RouteConfig>;
  /** A name that is not a route: an alias, `provider/model`, or a bare model id (resolve-name.ts). */
  resolve: (name: string) => ResolvedModel;
}

/** The candidates of one name: a route's targets, or the single target the name resolves to. */
function candidatesOf(name: string, requested: string, sources: PlanSources): Candidate[] {
  const route = Object.hasOwn(sources.routes, name) ? sources.routes[name] : undefined;
  if (!route) {
    const target = { ...sources.resolve(name), requested };
    return [
      {
        target,
        key: `${target.provider}/${target.model}`,
        weight: 1,
        ttftTimeoutMs: 0,
        answerTimeoutMs: 0,
        params: undefined,
        via: name,
      },
    ];
  }
  return route.targets.map((t) => {
    const target = { ...sources.resolve(t.model), requested };
    return {
      target,
      key: `${target.provider}/${target.model}`,
      weight: t.weight,
      ttftTimeoutMs: (t.ttft_timeout_s ?? 0) * 1000,
      answerTimeoutMs: (t.timeout_s ?? 0) * 1000,
      params: t.params,
      via: name,
    };
  });
}

/**
 * The plan of a request naming `model` and, optionally, its own fallbacks (OpenRouter's
 * `models`): each fallback is resolved like `model` (a route expands to its targets), and a target
 * already planned is not planned twice. A fallback that does not resolve is the client's mistake:
 * a 404 naming it, before anything is sent.
 */
export function planRoute(model: string, fallbacks: readonly string[], sources: PlanSources): RoutePlan {
  const route = Object.hasOwn(sources.routes, model) ? sources.routes[model] : undefined;
  const primary = candidatesOf(model, model, sources);
  const seen = new Set(primary.map((c) => c.key));
  const extra: Candidate[] = [];
  for (const [i, name] of fallbacks.entries()) {
    let found: Candidate[];
    try {
      found = candidatesOf(name, model, sources);
    } catch (err) {
      if (err instanceof GatewayError && err.code === 'model_not_found') {
        throw new GatewayError({
          code: err.code,
          status: err.status,
          type: err.type,
          message: err.message,
          param: `models[${i}]`,
        });
      }
      throw err;
    }
    for (const c of found) {
      if (seen.has(c.key)) continue;
      seen.add(c.key);
      extra.push(c);
    }
  }
  return {
    requested: model,
    strategy: route?.strategy ?? 'ordered',
    sticky: route?.sticky ?? false,
    primary,
    fallbacks: extra,
  };
}

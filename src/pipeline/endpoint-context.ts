import { errors } from '../errors/catalog.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { PipelineContext } from './context.ts';
import type { StreamOverrides } from './stream-settings.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { Router } from '../routing/router.ts';
import type { Endpoint } from '../governance/keys/governance-store.ts';

/**
 * The pipeline's context as a request to `/{project}/{endpoint}/v1/...` sees it; the lifecycle
 * (authenticate → parse → resolve → admit → ...) stays the one every model request runs:
 * - authenticate: the caller must belong to the endpoint's project (the master key and admin keys
 *   reach every project). A missing endpoint and another project's endpoint are the same 404,
 *   given only after the key was checked: a client without a key learns nothing of which exist.
 * - resolve: a model name that resolves (an alias, or provider/model of an enabled provider) is
 *   used as on /v1; any other name (`llama-3.1-8b`, no provider prefix) means the endpoint's model,
 *   and is echoed back to the client as it sent it (and recorded so in the ledger).
 * - admit: a key's allowed models see the endpoint's model name for such a request, so a key
 *   allowed `fast` may use an endpoint of `fast` whatever bare name its clients send.
 * - cache: the endpoint's `cache`, if set, opts its requests in (cache-policy.ts orders it
 *   between the route's and the tier's).
 */
export function endpointContext<C extends PipelineContext>(
  ctx: C,
  project: string,
  name: string,
  endpoint: Endpoint | undefined,
): C {
  const viaEndpoint = new WeakSet<object>();
  return {
    ...ctx,
    async authenticate(req) {
      const caller = await ctx.authenticate(req);
      if (!endpoint || (!caller.admin && caller.projectId !== endpoint.projectId)) throw errors.endpointNotFound(project, name);
      return caller;
    },
    endpointCache: endpoint?.cache ?? undefined,
    registry: endpoint ? withDefaultModel(ctx.registry, endpoint.model, viaEndpoint) : ctx.registry,
    router: endpoint ? withDefaultRoute(ctx.router, endpoint.model, viaEndpoint) : ctx.router,
    admit(request) {
      if (!endpoint || !viaEndpoint.has(request.target)) return ctx.admit(request);
      return ctx.admit({ ...request, target: { ...request.target, requested: endpoint.model } });
    },
  };
}

function withDefaultModel(registry: ProviderRegistry, model: string, viaEndpoint: WeakSet<object>): ProviderRegistry {
  return {
    ...registry,
    resolve(requested) {
      try {
        return registry.resolve(requested);
      } catch (err) {
        if (!(err instanceof GatewayError) || err.code !== 'model_not_found') throw err;
      }
      const target = { ...registry.resolve(model), requested };
      viaEndpoint.add(target);
      return target;
    },
  };
}

/**
 * The resolve step of an endpoint's request: a name that is a route, an alias or provider/model
 * is used as on /v1; any other (a bare id that a provider might serve too) means the endpoint's
 * model, which may itself be a route.
 */
function withDefaultRoute(router: Router, model: string, viaEndpoint: WeakSet<object>): Router {
  return {
    ...router,
    plan(requested, fallbacks) {
      if (requested.includes('/') || router.isPublicName(requested)) {
        try {
          return router.plan(requested, fallbacks);
        } catch (err) {
          if (!(err instanceof GatewayError) || err.code !== 'model_not_found' || err.param !== 'model') throw err;
        }
      }
      const plan = router.plan(model, fallbacks);
      const primary = plan.primary.map((c) => ({ ...c, target: { ...c.target, requested } }));
      for (const c of primary) viaEndpoint.add(c.target);
      return { ...plan, requested, primary };
    },
  };
}

/** A body without a model (or with an empty one) gets the endpoint's. */
export function withEndpointModel(body: unknown, endpoint: Endpoint | undefined): unknown {
  if (!endpoint || body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const fields = body as Record<string, unknown>;
  return fields.model === undefined || fields.model === null || fields.model === '' ? { ...fields, model: endpoint.model } : body;
}

/** The stream settings the endpoint sets (those it leaves unset keep the config's). */
export function streamOverrides(endpoint: Endpoint | undefined): StreamOverrides {
  const overrides: StreamOverrides = {};
  if (endpoint?.streamProfile) overrides.profile = endpoint.streamProfile;
  if (endpoint?.usage) overrides.usage = endpoint.usage;
  if (endpoint?.errorStyle) overrides.error_style = endpoint.errorStyle;
  if (endpoint?.vendorEvents) overrides.vendor_events = endpoint.vendorEvents;
  return overrides;
}

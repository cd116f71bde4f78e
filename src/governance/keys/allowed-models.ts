import { errors } from '../../errors/catalog.ts';
import type { Admit } from '../../admission/admission.ts';

/**
 * Refuses (403 model_not_allowed, param `model`) a model the caller's key may not use, before
 * the admit step it wraps counts anything against the key's limits. A key's `models` lists names
 * as clients send them (an alias, `provider/model`); a request is allowed when the list holds the
 * name it used or the `provider/model` that name resolved to, so allowing a model allows every
 * alias of it, and allowing an alias allows only that alias.
 */
export function refuseDisallowedModels(admit: Admit): Admit {
  return (request) => {
    const allowed = request.caller.allowedModels;
    if (allowed) {
      const { requested, provider, model } = request.target;
      if (!allowed.includes(requested) && !allowed.includes(`${provider}/${model}`)) throw errors.modelNotAllowed(requested);
    }
    return admit(request);
  };
}

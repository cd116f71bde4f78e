import { errors } from '../errors/catalog.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { ProviderRegistry, ResolvedModel } from '../providers/registry.ts';

/**
 * A model name as the registry resolves it (an alias, `provider/model`), or a bare model id
 * (`gpt-4o-mini`, `claude-sonnet-4-5`) at the one enabled provider that serves it. Several
 * providers, or none: a 404 that names the candidates, never a guess.
 * `publicNames` (routes and aliases) are listed when nothing serves the name.
 */
export function resolveName(registry: ProviderRegistry, name: string, publicNames: readonly string[]): ResolvedModel {
  try {
    return registry.resolve(name);
  } catch (err) {
    if (!(err instanceof GatewayError) || err.code !== 'model_not_found' || name.includes('/')) throw err;
  }
  const serving = registry.servingProviders(name);
  if (serving.length === 1) return { ...registry.resolve(`${serving[0]}/${name}`), requested: name };
  if (serving.length > 1) {
    throw errors.modelNotFound(name, `several providers serve it; name one of ${serving.map((p) => `${p}/${name}`).join(', ')}.`);
  }
  const names = publicNames.length ? ` or one of ${publicNames.join(', ')}` : '';
  throw errors.modelNotFound(
    name,
    `no enabled provider (${registry.providers().join(', ')}) serves it; name it as provider/model${names}.`,
  );
}

import type { PoolKeyView } from '../providers/key-pool/key-pool.ts';
import type { ProviderRegistry } from '../providers/registry.ts';

/** A key of a provider's pool as /metrics and /readyz show it: the provider, the key's label, its state. */
export type ProviderKeyView = PoolKeyView & { provider: string };

/** Every key of every pool of the registry in use (a reload replaces it, and its pools start afresh). */
export function keyViews(registry: Pick<ProviderRegistry, 'keyPools'>): ProviderKeyView[] {
  return [...registry.keyPools()].flatMap(([provider, pool]) => pool.view().map((key) => ({ ...key, provider })));
}

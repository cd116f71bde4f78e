import type { PoolKeyConfig, ProviderConfig } from '../../config/schema.ts';
import type { ProviderAdapter } from '../types.ts';
import { KeyPool } from './key-pool.ts';
import { pooledAdapter } from './pooled-adapter.ts';

/** The keys of an `api_keys` entry that resolved to something (`${OPENAI_KEY_2}` unset leaves its key out). */
export function liveKeys(entry: ProviderConfig | undefined): PoolKeyConfig[] {
  return (entry?.api_keys ?? []).filter((k) => k.key !== '');
}

/**
 * A provider over its key pool: `build` makes the provider's adapter with one key (as if that key
 * were its api_key), once per key; undefined when `build` makes none (the provider is not enabled).
 */
export function buildPooled<A extends ProviderAdapter>(
  provider: string,
  keys: readonly PoolKeyConfig[],
  build: (apiKey: string) => A | undefined,
  log: (line: string) => void,
): { adapter: A; pool: KeyPool } | undefined {
  const byLabel = new Map<string, A>();
  for (const key of keys) {
    const adapter = build(key.key);
    if (!adapter) return undefined;
    byLabel.set(key.label, adapter);
  }
  const pool = new KeyPool(provider, keys, log);
  return { adapter: pooledAdapter(pool, byLabel), pool };
}

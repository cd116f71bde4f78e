import type { Config } from '../config/schema.ts';
import { Governance } from '../governance/keys/governance.ts';

/**
 * The gateway's keys: the master key (SLUICE_MASTER_KEY, as before) and the keys it issues
 * (`sk-sluice-…`, src/governance/keys), whose authenticate step becomes context.authenticate.
 */
export function createGovernance(config: Config, log: (message: string) => void): Governance {
  return new Governance({
    masterKey: config.auth.master_key,
    pepper: config.auth.key_pepper,
    cacheTtlMs: config.auth.key_cache_ttl_s * 1000,
    defaultTier: config.default_tier ?? null,
    log,
  });
}

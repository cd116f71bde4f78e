import type { Config } from '../config/schema.ts';
import { nativeProviders } from './native-providers.ts';
import { presets } from './openai-compatible/presets.ts';

/**
 * Every credential the registry is built with, for the redactor: the master key, each provider's
 * api_key (or each key of its api_keys) and extra header values and the report APIs' admin keys (reconcile.providers) from the config, and the environment variables the presets and
 * native providers read keys from (set or not, they are all looked up; unset ones are skipped).
 */
export function configuredSecrets(config: Config, env: NodeJS.ProcessEnv): string[] {
  const out: (string | undefined)[] = [config.auth.master_key];
  for (const entry of Object.values(config.providers)) {
    out.push(
      entry.api_key,
      ...(entry.api_keys ?? []).map((k) => k.key),
      entry.client_secret,
      ...Object.values(entry.headers ?? {}),
    );
  }
  for (const report of Object.values(config.reconcile.providers)) out.push(report.admin_key);
  for (const preset of presets) if (preset.keyEnv) out.push(env[preset.keyEnv]);
  for (const native of nativeProviders) for (const name of native.secretEnv) out.push(env[name]);
  return out.filter((s): s is string => typeof s === 'string' && s !== '');
}

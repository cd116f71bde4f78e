import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { type Config, configSchema } from './schema.ts';

export interface LoadOptions {
  file?: string;
  env: NodeJS.ProcessEnv;
  /** CLI flags win over the file and the environment. */
  overrides?: { host?: string; port?: number };
}

/** `${VAR}` in any string of the YAML file is replaced by the environment variable. */
function interpolate(value: unknown, env: NodeJS.ProcessEnv): unknown {
  if (typeof value === 'string') return value.replace(/\$\{([A-Z0-9_]+)\}/gi, (_, name: string) => env[name] ?? '');
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)]));
  }
  return value;
}

export function loadConfig(options: LoadOptions): Config {
  const { env } = options;
  const file = options.file ?? env.SLUICE_CONFIG;
  let raw: Record<string, unknown> = {};
  if (file) {
    const text = readFileSync(file, 'utf8');
    raw = (interpolate(parseYaml(text) ?? {}, env) as Record<string, unknown>) ?? {};
  }
  const result = configSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(`Invalid config${file ? ` in ${file}` : ''} at ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  const config = result.data;
  if (env.HOST) config.server.host = env.HOST;
  if (env.PORT) config.server.port = Number(env.PORT);
  if (env.SLUICE_MASTER_KEY) config.auth.master_key = env.SLUICE_MASTER_KEY;
  if (env.DATABASE_URL && !config.store.database_url) config.store.database_url = env.DATABASE_URL;
  if (options.overrides?.host) config.server.host = options.overrides.host;
  if (options.overrides?.port !== undefined) config.server.port = options.overrides.port;
  return config;
}

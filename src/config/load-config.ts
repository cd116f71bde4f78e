import { readFileSync } from 'node:fs';
import { LineCounter, parseDocument } from 'yaml';
import { coerceInterpolated } from './coerce-scalars.ts';
import { ConfigError } from './config-error.ts';
import { describeIssue } from './describe-issue.ts';
import { interpolateEnv } from './interpolate-env.ts';
import { type Config, configSchema, LOG_LEVELS } from './schema.ts';

export interface LoadOptions {
  file?: string;
  env: NodeJS.ProcessEnv;
  /** CLI flags win over the file and the environment. */
  overrides?: { host?: string; port?: number };
}

/**
 * The config: the YAML file (if any), then the environment, then CLI flags. Every mistake an
 * operator can make here is a ConfigError with a one-line message naming the file and the key.
 */
export function loadConfig(options: LoadOptions): Config {
  const { env } = options;
  const file = options.file ?? (env.SLUICE_CONFIG || undefined);
  const config = parseConfig(file, env);
  applyEnv(config, env);
  if (options.overrides?.host) config.server.host = options.overrides.host;
  if (options.overrides?.port !== undefined)
    config.server.port = portNumber(String(options.overrides.port), `--port ${options.overrides.port}`);
  return config;
}

/** The file's config (the defaults without one), its ${VAR}s interpolated, checked against the schema. */
function parseConfig(file: string | undefined, env: NodeJS.ProcessEnv): Config {
  const interpolated: PropertyKey[][] = [];
  const raw = (file ? interpolateEnv(readYamlFile(file), env, file, interpolated) : {}) ?? {};
  let result = configSchema.safeParse(raw);
  if (!result.success && coerceInterpolated(raw, result.error.issues, interpolated)) result = configSchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.flatMap((issue) => describeIssue(issue, configSchema));
    throw new ConfigError(
      `${file ?? 'config'}: ${problems.join('; ')}`,
      problems.map((problem) => `${file ?? 'config'}: ${problem}`),
    );
  }
  return result.data;
}

/** The environment over the file; a URL the file sets wins over the environment's. */
function applyEnv(config: Config, env: NodeJS.ProcessEnv): void {
  if (env.HOST) config.server.host = env.HOST;
  if (env.PORT) config.server.port = portNumber(env.PORT, `PORT=${env.PORT}`);
  if (env.SLUICE_MASTER_KEY) config.auth.master_key = env.SLUICE_MASTER_KEY;
  if (env.SLUICE_KEY_PEPPER) config.auth.key_pepper = env.SLUICE_KEY_PEPPER;
  if (env.DATABASE_URL && !config.store.database_url) config.store.database_url = env.DATABASE_URL;
  if (env.REDIS_URL && !config.limits.redis_url) config.limits.redis_url = env.REDIS_URL;
  if (env.SLUICE_LOG_LEVEL) config.log.level = logLevel(env.SLUICE_LOG_LEVEL);
  if (config.response_cache.backend === 'redis' && !config.limits.redis_url) {
    throw new ConfigError('response_cache.backend `redis` needs limits.redis_url (or REDIS_URL): the shared cache lives there.');
  }
}

function logLevel(text: string): Config['log']['level'] {
  const level = LOG_LEVELS.find((l) => l === text.trim().toLowerCase());
  if (!level) throw new ConfigError(`SLUICE_LOG_LEVEL=${text} is not a log level (${LOG_LEVELS.join(', ')}).`);
  return level;
}

function portNumber(text: string, source: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text.trim()) || port > 65535) throw new ConfigError(`${source} is not a port number (0 to 65535).`);
  return port;
}

/** The parsed YAML document; a missing file, an unreadable one or a syntax error names the file (and line, column). */
function readYamlFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ConfigError(`Config file not found: ${file}`);
    throw new ConfigError(`Cannot read config file ${file}: ${code ?? (err as Error).message}`);
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const error = doc.errors[0];
  if (error) {
    const { line, col } = lineCounter.linePos(error.pos[0]);
    throw new ConfigError(`${file}:${line}:${col}: YAML syntax error: ${error.message}`);
  }
  try {
    return doc.toJS();
  } catch (err) {
    // An alias to an anchor that does not exist is only found when the document is built.
    throw new ConfigError(`${file}: YAML error: ${(err as Error).message}`);
  }
}

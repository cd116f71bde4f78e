import { ConfigError } from '../config/config-error.ts';
import { loadConfig } from '../config/load-config.ts';
import type { Config } from '../config/schema.ts';
import { buildConfigParts, type ConfigParts } from '../server/config-parts.ts';
import { UpstreamClient } from '../upstream/http-client.ts';
import { keylessOpenHost } from './keyless-open-host.ts';

/**
 * `sluice config check [FILE]` (FILE, else SLUICE_CONFIG, else no file: the defaults and the
 * environment): the config loaded as `sluice serve` loads it, then the checks the gateway makes
 * when it starts (the providers, the routes' targets, a non-loopback host without a key), without
 * opening the store or Redis or listening. Every problem on its own line on stderr, exit 1; else
 * one line saying what would serve, exit 0.
 */
export async function configCheck(file: string | undefined, env: NodeJS.ProcessEnv): Promise<number> {
  const label = file ?? (env.SLUICE_CONFIG || undefined) ?? 'no config file (the defaults and the environment)';
  const { problems, summary } = await check(file, env, label);
  if (problems.length === 0) {
    console.log(`${label}: ok: ${summary}`);
    return 0;
  }
  for (const problem of problems) console.error(problem);
  console.error(`${label}: ${problems.length} problem${problems.length === 1 ? '' : 's'}: sluice serve would not start with it.`);
  return 1;
}

async function check(
  file: string | undefined,
  env: NodeJS.ProcessEnv,
  label: string,
): Promise<{ problems: string[]; summary?: string }> {
  let config: Config;
  try {
    config = loadConfig({ file, env });
  } catch (err) {
    if (err instanceof ConfigError) return { problems: [...err.problems] };
    throw err;
  }
  const problems: string[] = [];
  if (keylessOpenHost(config)) {
    problems.push(
      `${label}: server.host: ${config.server.host} is not a loopback address and there is no master key: ` +
        'set SLUICE_MASTER_KEY (or auth.master_key), or bind to 127.0.0.1.',
    );
  }
  // Nothing is sent upstream: the client only stands in for the one the providers are built with.
  const client = new UpstreamClient({ connectTimeoutMs: 1000, headersTimeoutMs: 1000 });
  let parts: ConfigParts | undefined;
  try {
    parts = buildConfigParts(config, env, client);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems.map((problem) => `${label}: ${problem}`));
  } finally {
    await client.close();
  }
  return { problems, summary: parts && summarize(config, parts) };
}

/** "2 providers enabled (mock, openai), 1 route, 0 aliases, 2 tiers (default: free)". */
function summarize(config: Config, parts: ConfigParts): string {
  const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
  const providers = parts.registry.providers();
  const tiers = Object.keys(config.tiers).length;
  return [
    `${count(providers.length, 'provider')} enabled (${providers.join(', ')})`,
    count(Object.keys(config.routes).length, 'route'),
    count(config.model_list.length, 'alias', 'aliases'),
    `${count(tiers, 'tier')}${config.default_tier ? ` (default: ${config.default_tier})` : ''}`,
  ].join(', ');
}

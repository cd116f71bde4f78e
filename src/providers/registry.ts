import { ConfigError } from '../config/config-error.ts';
import type { Config, ProviderConfig } from '../config/schema.ts';
import { errors } from '../errors/catalog.ts';
import { createRedactor, type Redact } from '../errors/redact.ts';
import type { UpstreamClient } from '../upstream/http-client.ts';
import { configuredSecrets } from './configured-secrets.ts';
import { buildPooled, liveKeys } from './key-pool/build-pool.ts';
import type { KeyPool } from './key-pool/key-pool.ts';
import { createMockProvider } from './mock/index.ts';
import { nativeProviders } from './native-providers.ts';
import { createOpenAICompatibleProvider, type OpenAICompatibleSettings } from './openai-compatible/index.ts';
import { findPreset, type OpenAICompatiblePreset, presets } from './openai-compatible/presets.ts';
import { knownModelIds, matchesModelId, pricedModels } from './priced-models.ts';
import { redactAdapter } from './redact-adapter.ts';
import type { ProviderAdapter } from './types.ts';
import type { BatchApi, BatchApiKind } from './batch-api.ts';

export interface ResolvedModel {
  adapter: ProviderAdapter;
  provider: string;
  /** The model id the upstream is asked for. */
  model: string;
  /** What the client named (alias or provider/model): echoed back in responses. */
  requested: string;
}

export interface ProviderRegistry {
  resolve(name: string): ResolvedModel;
  providers(): string[];
  /** Why `provider` serves nothing here and how to enable it (`set ANTHROPIC_API_KEY or ...`); undefined when it is enabled. */
  notEnabled(provider: string): string | undefined;
  /**
   * The enabled providers that serve a bare model id (no `provider/`): those whose configured
   * `models` or whose pricing-registry entry list it (never the mock).
   */
  servingProviders(model: string): string[];
  /**
   * Every addressable model: aliases and routes first, then `provider/model` for each enabled provider's
   * models (an OpenAI-compatible upstream's own list, the pricing registry's for a native
   * provider, the config's `models`, the mock's scenarios). Never rejects.
   */
  models(): Promise<{ id: string; owned_by: string }[]>;
  /** The enabled providers whose upstream has a batch API of this kind, in the order they were enabled. */
  batchProviders(kind: BatchApiKind): { name: string; api: BatchApi }[];
  /**
   * Removes the configured secrets (and anything shaped like a key) from text. The adapters
   * already pass their errors through it; it is here for whatever else logs upstream text.
   */
  redact: Redact;
  /** The key pools of the providers configured with `api_keys`, by provider. */
  keyPools(): ReadonlyMap<string, KeyPool>;
}

/**
 * A config entry whose api_key is written but resolves empty (`api_key: ${GROQ_API_KEY:-}` with
 * the variable unset) leaves its provider disabled: enabling it anyway sent every request
 * upstream without a key, to fail with the upstream's 401 instead of sluice's "not configured"
 * 404. An entry without an api_key line at all is unchanged (a keyless server, or the key from
 * the environment).
 */
function keyWrittenEmpty(entry: ProviderConfig | undefined): boolean {
  return entry?.api_key === '' || (entry?.api_keys !== undefined && liveKeys(entry).length === 0);
}

/**
 * A preset's settings when it is enabled: named in the config file, its key variable set, or (a
 * keyless server) its base-URL variable set. Undefined when it is not.
 */
function presetSettings(
  preset: OpenAICompatiblePreset,
  fromFile: ProviderConfig | undefined,
  env: NodeJS.ProcessEnv,
): OpenAICompatibleSettings | undefined {
  if (keyWrittenEmpty(fromFile)) return undefined;
  const apiKey = fromFile?.api_key || (preset.keyEnv ? env[preset.keyEnv] : undefined);
  const envBase = env[preset.baseUrlEnv];
  const enabled = Boolean(fromFile) || Boolean(apiKey) || (preset.keyless === true && Boolean(envBase));
  if (!enabled) return undefined;
  const baseUrl = fromFile?.base_url || envBase || preset.baseUrl;
  return openAICompatibleSettings(preset.name, baseUrl, apiKey, fromFile, preset.streamOptions ?? true);
}

/** An OpenAI-compatible upstream's settings: what its config entry (if any) says, else the defaults. */
function openAICompatibleSettings(
  name: string,
  baseUrl: string,
  apiKey: string | undefined,
  entry: ProviderConfig | undefined,
  streamOptions: boolean,
): OpenAICompatibleSettings {
  return {
    name,
    baseUrl,
    apiKey,
    headers: entry?.headers ?? {},
    streamOptions: entry?.stream_options ?? streamOptions,
    splitThinkTags: entry?.think_tags === 'reasoning',
    models: entry?.models ?? [],
    responsesApi: entry?.responses_api ?? false,
  };
}

/**
 * `log`: where a key taken out of its pool is told (the structured log's warnings).
 */
export function createProviderRegistry(
  config: Config,
  env: NodeJS.ProcessEnv,
  client: UpstreamClient,
  log: (line: string) => void = (line) => console.warn(line),
): ProviderRegistry {
  const adapters = new Map<string, ProviderAdapter>();
  adapters.set('mock', createMockProvider());
  const pools = new Map<string, KeyPool>();
  /**
   * The provider's adapter made by `build` with its api_key, or with each key of its `api_keys`
   * (one adapter over the pool). `build(undefined)`: the key from the environment, or none.
   */
  const withKeys = <A extends ProviderAdapter>(
    name: string,
    build: (apiKey: string | undefined) => A | undefined,
  ): A | undefined => {
    const keys = liveKeys(config.providers[name]);
    if (keys.length === 0) return build(undefined);
    const pooled = buildPooled(name, keys, build, log);
    if (pooled) pools.set(name, pooled.pool);
    return pooled?.adapter;
  };
  /** OpenAI-compatible upstreams list their models themselves. */
  const upstreamLists = new Map<string, () => Promise<string[]>>();
  const addOpenAICompatible = (settings: OpenAICompatibleSettings) => {
    const adapter = withKeys(settings.name, (apiKey) =>
      createOpenAICompatibleProvider(apiKey === undefined ? settings : { ...settings, apiKey }, client),
    );
    if (!adapter) return;
    adapters.set(settings.name, adapter);
    upstreamLists.set(settings.name, adapter.listUpstreamModels);
  };

  for (const preset of presets) {
    const settings = presetSettings(preset, config.providers[preset.name], env);
    if (settings) addOpenAICompatible(settings);
  }

  for (const native of nativeProviders) {
    if (keyWrittenEmpty(config.providers[native.name])) continue;
    const entry = config.providers[native.name];
    const adapter = withKeys(native.name, (apiKey) =>
      native.create(env, apiKey === undefined ? entry : { ...entry, api_key: apiKey }, client),
    );
    if (adapter) adapters.set(native.name, adapter);
  }

  const problems: string[] = [];
  for (const [name, settings] of Object.entries(config.providers)) {
    if (adapters.has(name) || findPreset(name) || nativeProviders.some((n) => n.name === name)) continue;
    // Another Azure resource or Vertex project, under a name of its own.
    const native = nativeProviders.find((n) => n.name === settings.type);
    if (native) {
      if (keyWrittenEmpty(settings)) continue;
      const adapter = native.create(env, settings, client, name);
      if (adapter) adapters.set(name, adapter);
      continue;
    }
    if (!settings.base_url) {
      problems.push(`providers.${name}: a server that is not a preset needs base_url (and type: openai-compatible).`);
      continue;
    }
    if (keyWrittenEmpty(settings)) continue;
    addOpenAICompatible(openAICompatibleSettings(name, settings.base_url, settings.api_key, settings, true));
  }
  if (problems.length > 0) throw new ConfigError(problems.join(' '), problems);

  // Upstream error text is redacted on its way out of every adapter, with the secrets read above.
  const redact = createRedactor(configuredSecrets(config, env));
  for (const [name, adapter] of adapters) adapters.set(name, redactAdapter(adapter, redact));

  const aliases = new Map(config.model_list.map((m) => [m.model_name, m.model]));

  const notEnabled = (provider: string): string | undefined => {
    if (adapters.has(provider)) return undefined;
    const preset = findPreset(provider);
    const needs = preset ? (preset.keyEnv ?? preset.baseUrlEnv) : nativeProviders.find((n) => n.name === provider)?.enableHint;
    return needs
      ? `provider '${provider}' is not configured: set ${needs} or add it to the config file.`
      : `no provider named '${provider}' (configured: ${[...adapters.keys()].join(', ')}).`;
  };

  return {
    resolve(name) {
      const target = aliases.get(name) ?? name;
      const slash = target.indexOf('/');
      if (slash <= 0 || slash === target.length - 1) {
        throw errors.modelNotFound(name, 'name models as provider/model (e.g. mock/echo) or use an alias from the config.');
      }
      const provider = target.slice(0, slash);
      const adapter = adapters.get(provider);
      if (!adapter) throw errors.modelNotFound(name, notEnabled(provider) ?? '');
      return { adapter, provider, model: target.slice(slash + 1), requested: name };
    },
    providers: () => [...adapters.keys()],
    notEnabled,
    servingProviders(model) {
      const serving: string[] = [];
      for (const [name, adapter] of adapters) {
        // The mock is for trying sluice out: `echo` alone is a mistake to report, not mock/echo.
        if (name === 'mock') continue;
        if (adapter.listModels().includes(model) || knownModelIds(name).has(model)) serving.push(name);
      }
      if (serving.length > 0) return serving;
      // No provider lists the name as it is: a dated snapshot (`claude-sonnet-4-20250514`, the
      // Responses reference's own example) is served where the registry matches it to a model.
      for (const name of adapters.keys()) if (name !== 'mock' && matchesModelId(name, model)) serving.push(name);
      return serving;
    },
    redact,
    batchProviders(kind) {
      const found: { name: string; api: BatchApi }[] = [];
      for (const [name, adapter] of adapters) if (adapter.batches?.kind === kind) found.push({ name, api: adapter.batches });
      return found;
    },
    keyPools: () => pools,
    async models() {
      const lists = await Promise.all(
        [...adapters].map(async ([name, adapter]) => {
          const listed = (await upstreamLists.get(name)?.()) ?? adapter.listModels();
          return { name, models: new Set([...listed, ...pricedModels(name)]) };
        }),
      );
      const out: { id: string; owned_by: string }[] = [];
      for (const [alias, target] of aliases) out.push({ id: alias, owned_by: target.slice(0, target.indexOf('/')) });
      // A route is a public name like an alias; it is owned by its first target's provider.
      for (const [name, route] of Object.entries(config.routes)) {
        const first = route.targets[0].model;
        out.push({ id: name, owned_by: first.slice(0, first.indexOf('/')) });
      }
      for (const { name, models } of lists) for (const model of models) out.push({ id: `${name}/${model}`, owned_by: name });
      return out;
    },
  };
}

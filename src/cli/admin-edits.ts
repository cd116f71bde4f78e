import {
  cacheSetting,
  COMMON,
  call,
  connect,
  duration,
  type EndpointJson,
  type KeyJson,
  one,
  printJson,
  type ProjectJson,
} from './admin-call.ts';
import { UsageError } from './operator-error.ts';
import { parseFlags } from './parse-flags.ts';
import { usage } from './usage.ts';

/**
 * `sluice keys update|disable|enable|delete`, `projects update|delete`, `endpoints
 * update|delete`: PATCH and DELETE on the admin API. A flag given changes that field, `none`
 * clears it (a tier, models, a budget, an expiry, an endpoint's stream settings or cache), a
 * flag left out keeps it. Each prints one line saying what changed, or the API's JSON with --json.
 */

/** `none` clears (null); anything else is the value itself. */
const orNone = (value: string | undefined): string | null | undefined => (value === 'none' ? null : value);

function usdChange(command: string, flag: string, value: string | undefined): number | null | undefined {
  if (value === undefined || value === 'none') return orNone(value) as null | undefined;
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || n <= 0)
    throw new UsageError(`sluice ${command}: --${flag} must be an amount in USD above 0, or none, not "${value}".`);
  return n;
}

function budgetChanges(command: string, daily: string | undefined, monthly: string | undefined) {
  if (daily === undefined && monthly === undefined) return undefined;
  return { daily_usd: usdChange(command, 'daily-usd', daily), monthly_usd: usdChange(command, 'monthly-usd', monthly) };
}

function modelsChange(models: string | undefined): string[] | null | undefined {
  if (models === undefined || models === 'none') return orNone(models) as null | undefined;
  return models.split(',').map((m) => m.trim());
}

function metadataChange(command: string, value: string | undefined): Record<string, string> | null | undefined {
  if (value === undefined || value === 'none') return orNone(value) as null | undefined;
  try {
    return JSON.parse(value) as Record<string, string>;
  } catch {
    throw new UsageError(`sluice ${command}: --metadata must be a JSON object such as '{"owner":"ops"}', or none.`);
  }
}

/** Refuses an update that names nothing to change (it would print an unchanged object as if it did something). */
function something(command: string, body: Record<string, unknown>): Record<string, unknown> {
  if (Object.values(body).every((v) => v === undefined))
    throw new UsageError(`sluice ${command}: name at least one field to change (--help lists them).`);
  return body;
}

const keyPath = (id: string) => `/admin/keys/${encodeURIComponent(id)}`;

export async function keysUpdate(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values, positionals } = parseFlags(
    name,
    args,
    {
      ...COMMON,
      name: { type: 'string' },
      tier: { type: 'string' },
      models: { type: 'string' },
      'expires-in': { type: 'string' },
      'daily-usd': { type: 'string' },
      'monthly-usd': { type: 'string' },
    },
    true,
  );
  if (values.help) return console.log(usage.keys);
  const [id] = one(name, positionals, 'the key id, e.g. sluice keys update 0123456789abcdef --tier gold');
  const expiresIn = values['expires-in'];
  const body = something(name, {
    name: orNone(values.name),
    tier: orNone(values.tier),
    models: modelsChange(values.models),
    budgets: budgetChanges(name, values['daily-usd'], values['monthly-usd']),
    expires_at: expiresIn === 'none' ? null : undefined,
    expires_in_s: expiresIn === undefined || expiresIn === 'none' ? undefined : duration(name, 'expires-in', expiresIn),
  });
  const key = await call<KeyJson>(connect(values.url, env), 'PATCH', keyPath(id), body);
  if (values.json) return printJson(key);
  return console.log(`Key ${key.id} updated.`);
}

/** `keys disable` and `keys enable`: PATCH {disabled}. */
function keysSwitch(disabled: boolean) {
  return async (name: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> => {
    const { values, positionals } = parseFlags(name, args, COMMON, true);
    if (values.help) return console.log(usage.keys);
    const [id] = one(name, positionals, `the key id, e.g. sluice ${name} 0123456789abcdef`);
    const key = await call<KeyJson>(connect(values.url, env), 'PATCH', keyPath(id), { disabled });
    if (values.json) return printJson(key);
    return console.log(`Key ${key.id} ${disabled ? 'disabled' : 'enabled'} (within a second on every instance).`);
  };
}

export const keysDisable = keysSwitch(true);
export const keysEnable = keysSwitch(false);

export async function keysDelete(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values, positionals } = parseFlags(name, args, COMMON, true);
  if (values.help) return console.log(usage.keys);
  const [id] = one(name, positionals, 'the key id, e.g. sluice keys delete 0123456789abcdef');
  const key = await call<KeyJson>(connect(values.url, env), 'DELETE', keyPath(id));
  if (values.json) return printJson(key);
  return console.log(`Key ${key.id} deleted; its requests and spend stay in the request log.`);
}

const projectPath = (id: string) => `/admin/projects/${encodeURIComponent(id)}`;

export async function projectsUpdate(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values, positionals } = parseFlags(
    name,
    args,
    {
      ...COMMON,
      name: { type: 'string' },
      tier: { type: 'string' },
      models: { type: 'string' },
      metadata: { type: 'string' },
      'daily-usd': { type: 'string' },
      'monthly-usd': { type: 'string' },
    },
    true,
  );
  if (values.help) return console.log(usage.projects);
  const [id] = one(name, positionals, 'the project id, e.g. sluice projects update team-a --tier gold');
  const body = something(name, {
    name: values.name,
    tier: orNone(values.tier),
    models: modelsChange(values.models),
    metadata: metadataChange(name, values.metadata),
    budgets: budgetChanges(name, values['daily-usd'], values['monthly-usd']),
  });
  const project = await call<ProjectJson>(connect(values.url, env), 'PATCH', projectPath(id), body);
  if (values.json) return printJson(project);
  return console.log(`Project ${project.id} updated.`);
}

export async function projectsDelete(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values, positionals } = parseFlags(name, args, { ...COMMON, force: { type: 'boolean', default: false } }, true);
  if (values.help) return console.log(usage.projects);
  const [id] = one(name, positionals, 'the project id, e.g. sluice projects delete team-a');
  const query = values.force ? '?force=true' : '';
  const project = await call<ProjectJson & { deleted_keys: string[] }>(
    connect(values.url, env),
    'DELETE',
    `${projectPath(id)}${query}`,
  );
  if (values.json) return printJson(project);
  const keys = project.deleted_keys.length;
  return console.log(
    `Project ${project.id} deleted${keys ? ` with its ${keys} key${keys === 1 ? '' : 's'}` : ''}; its requests and spend stay in the request log.`,
  );
}

const ENDPOINT_FLAGS = { ...COMMON, project: { type: 'string' }, name: { type: 'string' } } as const;

function endpointPath(command: string, project: string | undefined, endpoint: string | undefined): string {
  if (!project || !endpoint)
    throw new UsageError(`sluice ${command}: --project and --name are required (sluice endpoints list shows them).`);
  return `/admin/endpoints/${encodeURIComponent(project)}/${encodeURIComponent(endpoint)}`;
}

export async function endpointsUpdate(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values } = parseFlags(name, args, {
    ...ENDPOINT_FLAGS,
    model: { type: 'string' },
    profile: { type: 'string' },
    usage: { type: 'string' },
    'error-style': { type: 'string' },
    'vendor-events': { type: 'string' },
    'cache-ttl': { type: 'string' },
    'cache-max-bytes': { type: 'string' },
  });
  if (values.help) return console.log(usage.endpoints);
  const path = endpointPath(name, values.project, values.name);
  const body = something(name, {
    model: values.model,
    stream_profile: orNone(values.profile),
    usage: orNone(values.usage),
    error_style: orNone(values['error-style']),
    vendor_events: orNone(values['vendor-events']),
    cache: cacheSetting(name, values['cache-ttl'], values['cache-max-bytes']),
  });
  const endpoint = await call<EndpointJson>(connect(values.url, env), 'PATCH', path, body);
  if (values.json) return printJson(endpoint);
  return console.log(`Endpoint ${endpoint.base_path} updated.`);
}

export async function endpointsDelete(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values } = parseFlags(name, args, ENDPOINT_FLAGS);
  if (values.help) return console.log(usage.endpoints);
  const endpoint = await call<EndpointJson>(connect(values.url, env), 'DELETE', endpointPath(name, values.project, values.name));
  if (values.json) return printJson(endpoint);
  return console.log(`Endpoint ${endpoint.base_path} deleted.`);
}

import {
  budgets,
  cacheCell,
  cacheSetting,
  call,
  COMMON,
  connect,
  duration,
  type EndpointJson,
  type KeyJson,
  type ListJson,
  one,
  printJson,
  printTable,
  type ProjectJson,
} from './admin-call.ts';
import {
  endpointsDelete,
  endpointsUpdate,
  keysDelete,
  keysDisable,
  keysEnable,
  keysUpdate,
  projectsDelete,
  projectsUpdate,
} from './admin-edits.ts';
import { UsageError } from './operator-error.ts';
import { parseFlags } from './parse-flags.ts';
import { usage } from './usage.ts';

/**
 * `sluice keys|projects|endpoints <subcommand>`: the admin API of a running gateway (README
 * "Keys, projects and endpoints"), like `sluice logs`: --url or SLUICE_URL, and the master key
 * (or an admin key) in SLUICE_MASTER_KEY. Output is made for people and for scripts alike:
 * `create` and `rotate` print the new key alone on stdout (so `KEY=$(sluice keys create ...)`
 * works) and say the rest on stderr; `list` prints a table, or the API's JSON with --json.
 */
export type AdminCommand = 'keys' | 'projects' | 'endpoints';

/** A subcommand run with its full name (`keys create`, for messages), its arguments and the environment. */
type Subcommand = (name: string, args: string[], env: NodeJS.ProcessEnv) => Promise<void>;

const SUBCOMMANDS: Record<AdminCommand, Record<string, Subcommand>> = {
  keys: {
    create: keysCreate,
    list: keysList,
    update: keysUpdate,
    disable: keysDisable,
    enable: keysEnable,
    revoke: keysRevoke,
    rotate: keysRotate,
    delete: keysDelete,
  },
  projects: { create: projectsCreate, list: projectsList, update: projectsUpdate, delete: projectsDelete },
  endpoints: { create: endpointsCreate, list: endpointsList, update: endpointsUpdate, delete: endpointsDelete },
};

export async function runAdminCommand(command: AdminCommand, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') return console.log(usage[command]);
  const subcommands = SUBCOMMANDS[command];
  // Own keys only: a subcommand such as `constructor` must not find Object.prototype's.
  if (!Object.hasOwn(subcommands, sub)) {
    throw new UsageError(`sluice ${command}: unknown subcommand "${sub}" (${Object.keys(subcommands).join(', ')}).`);
  }
  return subcommands[sub](`${command} ${sub}`, rest, env);
}

async function projectsCreate(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values, positionals } = parseFlags(
    name,
    args,
    {
      ...COMMON,
      id: { type: 'string' },
      tier: { type: 'string' },
      'daily-usd': { type: 'string' },
      'monthly-usd': { type: 'string' },
    },
    true,
  );
  if (values.help) return console.log(usage.projects);
  const [projectName] = one(name, positionals, 'the project name, e.g. sluice projects create "Team A"');
  const project = await call<ProjectJson>(connect(values.url, env), 'POST', '/admin/projects', {
    id: values.id,
    name: projectName,
    tier: values.tier,
    budgets: budgets(name, values['daily-usd'], values['monthly-usd']),
  });
  if (values.json) return printJson(project);
  console.log(project.id);
  return console.error(`Project ${project.name} created: ${project.id}.`);
}

async function projectsList(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values } = parseFlags(name, args, COMMON);
  if (values.help) return console.log(usage.projects);
  const page = await call<ListJson<ProjectJson>>(connect(values.url, env), 'GET', '/admin/projects');
  if (values.json) return printJson(page.data);
  return printTable(
    ['ID', 'NAME', 'TIER', 'DAILY USD', 'MONTHLY USD', 'CREATED'],
    page.data.map((p) => [p.id, p.name, p.tier, p.budgets.daily_usd, p.budgets.monthly_usd, p.created_at]),
  );
}

async function keysCreate(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values } = parseFlags(name, args, {
    ...COMMON,
    project: { type: 'string' },
    name: { type: 'string' },
    tier: { type: 'string' },
    models: { type: 'string' },
    'expires-in': { type: 'string' },
    'daily-usd': { type: 'string' },
    'monthly-usd': { type: 'string' },
    admin: { type: 'boolean', default: false },
  });
  if (values.help) return console.log(usage.keys);
  if (!values.project) throw new UsageError(`sluice ${name}: --project is required (sluice projects list shows them).`);
  const created = await call<KeyJson>(connect(values.url, env), 'POST', '/admin/keys', {
    project: values.project,
    name: values.name,
    tier: values.tier,
    models: values.models?.split(',').map((m) => m.trim()),
    expires_in_s: values['expires-in'] === undefined ? undefined : duration(name, 'expires-in', values['expires-in']),
    budgets: budgets(name, values['daily-usd'], values['monthly-usd']),
    admin: values.admin || undefined,
  });
  return printIssued(created, values.json, `Key ${created.id} created in project ${created.project}.`);
}

async function keysList(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values } = parseFlags(name, args, {
    ...COMMON,
    project: { type: 'string' },
    deleted: { type: 'boolean', default: false },
  });
  if (values.help) return console.log(usage.keys);
  const params = new URLSearchParams();
  if (values.project) params.set('project', values.project);
  if (values.deleted) params.set('include_deleted', 'true');
  const query = params.size ? `?${params}` : '';
  const page = await call<ListJson<KeyJson>>(connect(values.url, env), 'GET', `/admin/keys${query}`);
  if (values.json) return printJson(page.data);
  return printTable(
    ['ID', 'PROJECT', 'NAME', 'TIER', 'STATUS', 'ADMIN', 'CREATED', 'EXPIRES', 'LAST USED'],
    page.data.map((k) => [
      k.id,
      k.project,
      k.name,
      k.tier,
      k.status,
      k.admin ? 'yes' : '',
      k.created_at,
      k.expires_at,
      k.last_used_at,
    ]),
  );
}

async function keysRevoke(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values, positionals } = parseFlags(name, args, COMMON, true);
  if (values.help) return console.log(usage.keys);
  const [id] = one(name, positionals, 'the key id, e.g. sluice keys revoke 0123456789abcdef');
  const revoked = await call<KeyJson>(connect(values.url, env), 'POST', `/admin/keys/${encodeURIComponent(id)}/revoke`, {});
  if (values.json) return printJson(revoked);
  return console.log(`Key ${revoked.id} revoked (now on that gateway, within its auth.key_cache_ttl_s on the others).`);
}

async function keysRotate(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values, positionals } = parseFlags(name, args, { ...COMMON, grace: { type: 'string' } }, true);
  if (values.help) return console.log(usage.keys);
  const [id] = one(name, positionals, 'the key id, e.g. sluice keys rotate 0123456789abcdef');
  const rotated = await call<KeyJson>(connect(values.url, env), 'POST', `/admin/keys/${encodeURIComponent(id)}/rotate`, {
    grace_s: values.grace === undefined ? undefined : duration(name, 'grace', values.grace),
  });
  const old = rotated.previous_secret_valid_until ? `until ${rotated.previous_secret_valid_until}` : 'no longer';
  return printIssued(rotated, values.json, `Key ${rotated.id} has a new secret; the old one works ${old}.`);
}

async function endpointsCreate(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values } = parseFlags(name, args, {
    ...COMMON,
    project: { type: 'string' },
    name: { type: 'string' },
    model: { type: 'string' },
    profile: { type: 'string' },
    usage: { type: 'string' },
    'error-style': { type: 'string' },
    'vendor-events': { type: 'string' },
    'cache-ttl': { type: 'string' },
    'cache-max-bytes': { type: 'string' },
  });
  if (values.help) return console.log(usage.endpoints);
  for (const flag of ['project', 'name', 'model'] as const) {
    if (!values[flag]) throw new UsageError(`sluice ${name}: --${flag} is required.`);
  }
  const connection = connect(values.url, env);
  const endpoint = await call<EndpointJson>(connection, 'POST', '/admin/endpoints', {
    project: values.project,
    name: values.name,
    model: values.model,
    stream_profile: values.profile,
    usage: values.usage,
    error_style: values['error-style'],
    vendor_events: values['vendor-events'],
    cache: cacheSetting(name, values['cache-ttl'], values['cache-max-bytes']),
  });
  if (values.json) return printJson(endpoint);
  return console.log(`${connection.url}${endpoint.base_path}`);
}

async function endpointsList(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const { values } = parseFlags(name, args, { ...COMMON, project: { type: 'string' } });
  if (values.help) return console.log(usage.endpoints);
  const query = values.project ? `?project=${encodeURIComponent(values.project)}` : '';
  const page = await call<ListJson<EndpointJson>>(connect(values.url, env), 'GET', `/admin/endpoints${query}`);
  if (values.json) return printJson(page.data);
  return printTable(
    ['PROJECT', 'NAME', 'MODEL', 'PROFILE', 'USAGE', 'ERROR STYLE', 'CACHE', 'BASE PATH'],
    page.data.map((e) => [e.project, e.name, e.model, e.stream_profile, e.usage, e.error_style, cacheCell(e.cache), e.base_path]),
  );
}

function printIssued(issued: KeyJson, json: boolean, note: string): void {
  if (json) return printJson(issued);
  console.log(issued.key);
  console.error(`${note} It is shown only now: store it where your application reads its secrets.`);
}

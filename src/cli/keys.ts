import { OperatorError, UsageError } from './operator-error.ts';
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
  keys: { create: keysCreate, list: keysList, revoke: keysRevoke, rotate: keysRotate },
  projects: { create: projectsCreate, list: projectsList },
  endpoints: { create: endpointsCreate, list: endpointsList },
};

const COMMON = { url: { type: 'string' }, json: { type: 'boolean', default: false } } as const;

interface Connection {
  url: string;
  key: string | undefined;
}

/** What the admin API answers (src/governance/keys/admin-json.ts), as far as the commands read it. */
interface ProjectJson {
  id: string;
  name: string;
  tier: string | null;
  budgets: { daily_usd: number | null; monthly_usd: number | null };
  created_at: string;
}

interface KeyJson {
  id: string;
  project: string;
  name: string | null;
  tier: string | null;
  status: string;
  admin: boolean;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  previous_secret_valid_until: string | null;
  /** Only when created or rotated. */
  key?: string;
}

interface EndpointJson {
  project: string;
  name: string;
  model: string;
  stream_profile: string | null;
  usage: string | null;
  error_style: string | null;
  vendor_events: string | null;
  base_path: string;
}

interface ListJson<T> {
  data: T[];
}

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

/** The gateway to call: --url, else SLUICE_URL, else this machine's PORT; the key from SLUICE_MASTER_KEY. */
export function connect(url: string | undefined, env: NodeJS.ProcessEnv): Connection {
  return {
    url: connectionUrl(url ?? (env.SLUICE_URL || `http://127.0.0.1:${env.PORT || '8080'}`)),
    key: env.SLUICE_MASTER_KEY || undefined,
  };
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
  const { values } = parseFlags(name, args, { ...COMMON, project: { type: 'string' } });
  if (values.help) return console.log(usage.keys);
  const query = values.project ? `?project=${encodeURIComponent(values.project)}` : '';
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
    ['PROJECT', 'NAME', 'MODEL', 'PROFILE', 'USAGE', 'ERROR STYLE', 'BASE PATH'],
    page.data.map((e) => [e.project, e.name, e.model, e.stream_profile, e.usage, e.error_style, e.base_path]),
  );
}

function connectionUrl(url: string): string {
  try {
    return new URL(url).href.replace(/\/+$/, '');
  } catch {
    throw new OperatorError(`--url (or SLUICE_URL) is not a URL: "${url}".`);
  }
}

function one(command: string, positionals: string[], what: string): [string] {
  if (positionals.length !== 1) throw new UsageError(`sluice ${command}: name ${what}.`);
  return [positionals[0]];
}

/** `30d`, `12h`, `90m`, `45s` or plain seconds, as whole seconds. */
function duration(command: string, flag: string, value: string): number {
  const match = /^(\d{1,9})([smhd]?)$/.exec(value);
  if (!match || Number(match[1]) === 0) {
    throw new UsageError(`sluice ${command}: --${flag} must be a duration such as 90s, 30m, 12h or 30d, not "${value}".`);
  }
  return Number(match[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }[match[2] as '' | 's' | 'm' | 'h' | 'd'];
}

function budgets(
  command: string,
  daily: string | undefined,
  monthly: string | undefined,
): Record<string, number | undefined> | undefined {
  if (daily === undefined && monthly === undefined) return undefined;
  const usd = (flag: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!/^\d+(\.\d+)?$/.test(value) || n <= 0)
      throw new UsageError(`sluice ${command}: --${flag} must be an amount in USD above 0, not "${value}".`);
    return n;
  };
  return { daily_usd: usd('daily-usd', daily), monthly_usd: usd('monthly-usd', monthly) };
}

/** One admin API call; what an operator can fix (no gateway, a wrong key, a bad value) is an OperatorError saying so. */
export async function call<T>(
  connection: Connection,
  method: 'GET' | 'POST',
  path: string,
  body?: Record<string, unknown>,
): Promise<T> {
  const headers: Record<string, string> = connection.key ? { authorization: `Bearer ${connection.key}` } : {};
  const init: RequestInit = { method, headers };
  if (method === 'POST') {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body ?? {});
  }
  let res: Response;
  try {
    res = await fetch(`${connection.url}${path}`, init);
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new OperatorError(
      `no sluice answering at ${connection.url} (${cause?.code ?? cause?.message ?? (err as Error).message}): start one with \`sluice serve\`, or point --url (or SLUICE_URL) at it.`,
    );
  }
  const answer = (await res.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
  const held = connection.key ? 'the key in SLUICE_MASTER_KEY' : 'a request without a key';
  if (res.status === 401) {
    throw new OperatorError(
      `${connection.url} refused ${held} (401): set SLUICE_MASTER_KEY to the gateway's master key or an admin key.`,
    );
  }
  if (res.status === 403) {
    throw new OperatorError(
      `${connection.url} refused ${held} (403): the admin API needs the master key or a key created with --admin.`,
    );
  }
  if (!answer)
    throw new OperatorError(`${connection.url} did not answer like sluice (HTTP ${res.status}): is --url (or SLUICE_URL) right?`);
  if (!res.ok) throw new OperatorError(`${connection.url} answered ${res.status}: ${answer.error?.message ?? 'no message'}`);
  return answer as T;
}

function printIssued(issued: KeyJson, json: boolean, note: string): void {
  if (json) return printJson(issued);
  console.log(issued.key);
  console.error(`${note} It is shown only now: store it where your application reads its secrets.`);
}

export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

function printTable(header: string[], rows: unknown[][]): void {
  const cells = [header, ...rows.map((r) => r.map((v) => (v === null || v === undefined || v === '' ? '-' : String(v))))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  for (const row of cells)
    console.log(
      row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    );
}

import { OperatorError, UsageError } from './operator-error.ts';

/**
 * What the admin commands share (keys.ts, admin-edits.ts): the gateway to call, the call itself
 * with its operator errors, the flags' values (durations, budgets) and the output (JSON, tables).
 */
export const COMMON = { url: { type: 'string' }, json: { type: 'boolean', default: false } } as const;

interface Connection {
  url: string;
  key: string | undefined;
}

/** What the admin API answers (src/governance/keys/admin-json.ts), as far as the commands read it. */
export interface ProjectJson {
  id: string;
  name: string;
  tier: string | null;
  budgets: { daily_usd: number | null; monthly_usd: number | null };
  created_at: string;
}

export interface KeyJson {
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

export interface EndpointJson {
  project: string;
  name: string;
  model: string;
  stream_profile: string | null;
  usage: string | null;
  error_style: string | null;
  vendor_events: string | null;
  cache: EndpointCache | null;
  base_path: string;
}

/** As sent (max_bytes may be left to its default) and as answered. */
interface EndpointCache {
  ttl_s: number;
  max_bytes?: number;
}

export interface ListJson<T> {
  data: T[];
}

/** The gateway to call: --url, else SLUICE_URL, else this machine's PORT; the key from SLUICE_MASTER_KEY. */
export function connect(url: string | undefined, env: NodeJS.ProcessEnv): Connection {
  return {
    url: connectionUrl(url ?? (env.SLUICE_URL || `http://127.0.0.1:${env.PORT || '8080'}`)),
    key: env.SLUICE_MASTER_KEY || undefined,
  };
}

function connectionUrl(url: string): string {
  try {
    return new URL(url).href.replace(/\/+$/, '');
  } catch {
    throw new OperatorError(`--url (or SLUICE_URL) is not a URL: "${url}".`);
  }
}

export function one(command: string, positionals: string[], what: string): [string] {
  if (positionals.length !== 1) throw new UsageError(`sluice ${command}: name ${what}.`);
  return [positionals[0]];
}

/** `30d`, `12h`, `90m`, `45s` or plain seconds, as whole seconds. */
export function duration(command: string, flag: string, value: string): number {
  const match = /^(\d{1,9})([smhd]?)$/.exec(value);
  if (!match || Number(match[1]) === 0) {
    throw new UsageError(`sluice ${command}: --${flag} must be a duration such as 90s, 30m, 12h or 30d, not "${value}".`);
  }
  return Number(match[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }[match[2] as '' | 's' | 'm' | 'h' | 'd'];
}

/**
 * An endpoint's response cache from --cache-ttl and --cache-max-bytes: both left out keeps it,
 * `--cache-ttl none` turns it off (null). A setting replaces the old one whole, so
 * --cache-max-bytes comes with --cache-ttl (left out, it is the config's default of 1 MiB).
 */
export function cacheSetting(
  command: string,
  ttl: string | undefined,
  maxBytes: string | undefined,
): EndpointCache | null | undefined {
  if (ttl === undefined && maxBytes === undefined) return undefined;
  if (ttl === 'none' && maxBytes === undefined) return null;
  if (ttl === undefined || ttl === 'none')
    throw new UsageError(`sluice ${command}: --cache-max-bytes needs --cache-ttl (the cache setting is replaced whole).`);
  if (maxBytes !== undefined && !/^[1-9]\d{0,14}$/.test(maxBytes))
    throw new UsageError(`sluice ${command}: --cache-max-bytes must be a whole number of bytes above 0, not "${maxBytes}".`);
  return { ttl_s: duration(command, 'cache-ttl', ttl), max_bytes: maxBytes === undefined ? undefined : Number(maxBytes) };
}

/** An endpoint's cache as the list shows it: `300s/1048576B` (how long, the largest answer kept). */
export const cacheCell = (cache: EndpointCache | null): string | null => cache && `${cache.ttl_s}s/${cache.max_bytes}B`;

export function budgets(
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
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  body?: Record<string, unknown>,
): Promise<T> {
  const headers: Record<string, string> = connection.key ? { authorization: `Bearer ${connection.key}` } : {};
  const init: RequestInit = { method, headers };
  if (method === 'POST' || method === 'PATCH') {
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

export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

export function printTable(header: string[], rows: unknown[][]): void {
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

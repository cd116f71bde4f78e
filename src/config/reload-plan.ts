import { isDeepStrictEqual } from 'node:util';
import { formatKeyPath } from './key-path.ts';
import type { Config } from './schema.ts';

type KeyPath = readonly string[];

/**
 * The keys a running process reads once, at start: what they set up (a bound socket, the store
 * and the ledger's writer, the Redis connection, the key cache and sessions, the upstream
 * connection pools, the resume buffer, the metrics registry, the trace exporter, the reconciliation schedule's
 * timer, the log's output) lives as long as the process. A reload keeps their running values and names each
 * that changed: a restart applies them (docs/operations/reload.md).
 */
export const RESTART_ONLY: readonly KeyPath[] = [
  ['server', 'host'],
  ['server', 'port'],
  ['server', 'backlog'],
  ['server', 'max_connections'],
  ['server', 'max_connections_per_client'],
  ['server', 'trusted_proxies'],
  ['server', 'headers_timeout_s'],
  ['server', 'request_timeout_s'],
  ['server', 'drain_timeout_s'],
  ['auth'],
  ['stream', 'resume'],
  ['response_cache'],
  ['store'],
  ['ledger'],
  ['upstream'],
  ['limits', 'redis_url'],
  ['limits', 'redis_timeout_ms'],
  ['limits', 'redis_prefix'],
  ['metrics', 'enabled'],
  ['metrics', 'max_label_values'],
  ['traces'],
  ['mcp', 'servers'],
  ['mcp', 'restart_initial_ms'],
  ['mcp', 'restart_max_ms'],
  ['reconcile', 'schedule', 'interval_h'],
  ['batches', 'poll_interval_s'],
  ['log', 'format'],
];

export interface ReloadPlan {
  /** The config to run: the new one, with the running value of every key that needs a restart. */
  config: Config;
  /** The keys whose new values take effect, as the file names them (`routes.smart`, `stream.heartbeat_s`). */
  changed: string[];
  /** The keys that changed in the file but keep their running values until a restart. */
  restartRequired: string[];
}

/**
 * What a reload from `running` to `next` does. `fixed`: more keys this process cannot change
 * while it runs, beyond RESTART_ONLY (the gateway's own reasons, e.g. tiers whose limits would
 * need a Redis connection it did not open).
 */
export function planReload(running: Config, next: Config, fixed: readonly KeyPath[] = []): ReloadPlan {
  const keep = [...RESTART_ONLY, ...fixed];
  const config = structuredClone(next);
  for (const path of keep) setAt(config, path, structuredClone(valueAt(running, path)));
  const changed: string[] = [];
  const restartRequired: string[] = [];
  for (const path of changedKeys(running, next)) {
    const held = keep.some((prefix) => prefix.every((key, i) => path[i] === key));
    (held ? restartRequired : changed).push(formatKeyPath(path));
  }
  return { config, changed, restartRequired };
}

/**
 * The key paths whose values differ, as deep as the objects go: a list is one value
 * (`routes.smart.targets`), a key added or removed is its own path (`routes.new`). A key absent
 * and a key set to undefined are the same.
 */
export function changedKeys(a: unknown, b: unknown, path: string[] = []): string[][] {
  if (!isPlainObject(a) || !isPlainObject(b)) return isDeepStrictEqual(a, b) ? [] : [path];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].flatMap((key) => changedKeys(a[key], b[key], [...path, key]));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function valueAt(config: Config, path: KeyPath): unknown {
  let node: unknown = config;
  for (const key of path) node = isPlainObject(node) ? node[key] : undefined;
  return node;
}

/** Sets the value at `path` (every section above it exists: the schema fills in each one). */
function setAt(config: Config, path: KeyPath, value: unknown): void {
  let node = config as unknown as Record<string, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
  const last = path[path.length - 1];
  if (value === undefined) delete node[last];
  else node[last] = value;
}

import { isIP } from 'node:net';
import type { Config } from '../config/schema.ts';

/**
 * A host other than loopback with no master key: `sluice serve` refuses to start (every route,
 * the admin API included, would be open to the network), and `sluice config check` says so.
 */
export function keylessOpenHost(config: Config): boolean {
  return !config.auth.master_key && !isLoopback(config.server.host);
}

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

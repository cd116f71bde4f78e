import type { Config } from '../config/schema.ts';

/**
 * What `sluice serve` says once its port is open, from one process or from the supervisor of
 * workers alike: where it listens (and why a machine with several cores got one process, or how
 * many workers), the providers it serves, and that it serves without auth when no master key is set.
 */
export function listeningLines(where: string, note: string | undefined, providers: readonly string[], config: Config): string[] {
  const lines = [`sluice listening on ${where}${note ? ` (${note})` : ''}`, `providers: ${providers.join(', ')}`];
  if (!config.auth.master_key) lines.push('no SLUICE_MASTER_KEY set: serving without auth (loopback only)');
  return lines;
}

/** An address as a URL's origin (an IPv6 address in brackets). */
export function originOf(address: { address: string; family: string; port: number }): string {
  return `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
}

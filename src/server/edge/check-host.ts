import type { IncomingMessage } from 'node:http';
import { errors } from '../../errors/catalog.ts';
import { isLoopbackHost, parseHostHeader } from './parse-host-header.ts';

export interface HostPolicy {
  /** With a master key the gateway may face a network; without one it serves loopback only. */
  masterKey: string | undefined;
  /** `server.allowed_hosts`: names (`api.example.com`), `*.example.com` for any subdomain, IPs. */
  allowedHosts: readonly string[];
}

/**
 * DNS-rebinding protection. A page on evil.example can make evil.example resolve to 127.0.0.1
 * and then talk to a keyless gateway as same-origin, so the browser's own checks never apply;
 * only the Host header still names the attacker's domain. Without a key, Host must be a
 * loopback name or address (or one of `allowed_hosts`); with a key, `allowed_hosts` when set
 * (empty: any host, the key being the protection). Ports are not compared.
 */
export function createHostCheck(policy: HostPolicy): (req: IncomingMessage) => void {
  const allowed = policy.allowedHosts.map((entry) =>
    entry
      .toLowerCase()
      .replace(/^\[(.*)\]$/, '$1')
      .replace(/\.$/, ''),
  );
  const exact = new Set(allowed.filter((entry) => !entry.startsWith('*.')));
  const suffixes = allowed.filter((entry) => entry.startsWith('*.')).map((entry) => entry.slice(1));
  const loopbackOnly = !policy.masterKey;
  const open = !loopbackOnly && allowed.length === 0;

  const isAllowed = (host: string) =>
    (loopbackOnly && isLoopbackHost(host)) || exact.has(host) || suffixes.some((suffix) => host.endsWith(suffix));

  return (req) => {
    const header = req.headers.host;
    if (!header) {
      // RFC 9112 3.2: an HTTP/1.1 request without Host is a 400 whatever the policy (node's own
      // check is off so that the answer has the OpenAI error shape). HTTP/1.0 may omit it.
      if (req.httpVersion === '1.1') throw errors.missingHost();
      if (!open) throw errors.hostNotAllowed(undefined);
      return;
    }
    if (open) return;
    const host = parseHostHeader(header);
    if (host === undefined || !isAllowed(host)) throw errors.hostNotAllowed(header);
  };
}

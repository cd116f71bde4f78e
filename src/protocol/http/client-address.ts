import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';

/**
 * Who a request comes from, for the edge's per-client limits (connections, failed keys) and the
 * console cookie's `Secure`: the peer's address, or, when the peer is one of
 * `server.trusted_proxies`, what that proxy says in X-Forwarded-For / X-Forwarded-Proto. A peer
 * that is not trusted cannot make itself anyone else: its forwarded headers are never read.
 */
export interface ClientAddressing {
  /** Whether a peer address (as the socket gives it) is a trusted proxy. */
  isTrustedProxy(peer: string | undefined): boolean;
  /** The client of a request: the forwarded client behind a trusted proxy, else the peer. */
  clientOf(req: IncomingMessage): string;
  /** Whether the client reached sluice over HTTPS: TLS here, or `X-Forwarded-Proto: https` from a trusted proxy. */
  isHttps(req: IncomingMessage): boolean;
}

/** `server.trusted_proxies`: addresses (`10.0.0.5`, `::1`) and CIDR blocks (`10.0.0.0/8`, `fd00::/8`). */
export function createClientAddressing(trustedProxies: readonly string[]): ClientAddressing {
  const trusted = new BlockList();
  for (const entry of trustedProxies) addEntry(trusted, entry);
  const none = trustedProxies.length === 0;
  const isTrustedProxy = (peer: string | undefined): boolean => {
    if (none || peer === undefined) return false;
    const address = normalizeAddress(peer);
    const family = isIP(address);
    return family !== 0 && trusted.check(address, family === 4 ? 'ipv4' : 'ipv6');
  };
  const peerOf = (req: IncomingMessage) => normalizeAddress(req.socket?.remoteAddress ?? '');
  return {
    isTrustedProxy,
    clientOf(req) {
      const peer = peerOf(req);
      if (!isTrustedProxy(peer)) return peer;
      return forwardedClient(req.headers['x-forwarded-for'], isTrustedProxy) ?? peer;
    },
    isHttps(req) {
      if ((req.socket as TLSSocket | undefined)?.encrypted === true) return true;
      if (!isTrustedProxy(peerOf(req))) return false;
      return lastValue(req.headers['x-forwarded-proto'])?.toLowerCase() === 'https';
    },
  };
}

/**
 * The client in an X-Forwarded-For chain (`client, proxy1, proxy2`, each proxy appending the
 * address it got the request from): the rightmost address that is not a trusted proxy. What is
 * left of it was written by that untrusted client and may be anything. An entry that is not an
 * address ends the walk at the last trusted hop (a misconfigured proxy, not a client to trust);
 * undefined when there is no usable entry.
 */
export function forwardedClient(
  header: string | string[] | undefined,
  isTrustedProxy: (address: string) => boolean,
): string | undefined {
  if (header === undefined) return undefined;
  const hops = (Array.isArray(header) ? header.join(',') : header).split(',');
  let nearest: string | undefined;
  for (let i = hops.length - 1; i >= 0; i--) {
    const address = normalizeAddress(hops[i].trim());
    if (isIP(address) === 0) return nearest;
    if (!isTrustedProxy(address)) return address;
    nearest = address;
  }
  return nearest;
}

/** `::ffff:10.0.0.1` (an IPv4 client of a dual-stack socket) -> `10.0.0.1`; IPv6 lowercased. */
export function normalizeAddress(address: string): string {
  const lower = address.toLowerCase();
  return lower.startsWith('::ffff:') && isIP(lower.slice(7)) === 4 ? lower.slice(7) : lower;
}

/**
 * What the per-client limits count by: an IPv4 address, or an IPv6 address's /64. One host (or
 * one customer of a provider) is normally given a whole /64, so counting single IPv6 addresses
 * would give one client 2^64 fresh identities.
 */
export function clientKey(address: string): string {
  if (isIP(address) !== 6) return address;
  return `${expandIpv6(address).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address, without leading zeros (`2001:db8::1` -> 2001,db8,0,0,0,0,0,1). */
function expandIpv6(address: string): string[] {
  let text = address;
  // A dotted IPv4 tail (`64:ff9b::1.2.3.4`) is the last two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((group) => Number.parseInt(group, 16).toString(16));
}

function addEntry(list: BlockList, entry: string): void {
  const slash = entry.indexOf('/');
  if (slash === -1) {
    const address = normalizeAddress(entry);
    list.addAddress(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');
    return;
  }
  const network = entry.slice(0, slash);
  list.addSubnet(network, Number(entry.slice(slash + 1)), isIP(network) === 4 ? 'ipv4' : 'ipv6');
}

/** The last value of a header a proxy may have appended to (`https, http` -> `http`: the nearest hop's). */
function lastValue(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const text = Array.isArray(header) ? header.join(',') : header;
  return text.slice(text.lastIndexOf(',') + 1).trim();
}

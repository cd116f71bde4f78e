import { isIP } from 'node:net';

/**
 * The host name of a Host header, lowercased, without its port, IPv6 brackets or a trailing dot:
 * `LocalHost.:8080` -> `localhost`, `[::1]:80` -> `::1`. Undefined for a header that is not a
 * host (a path, user info, spaces, an unbracketed IPv6 address): such a request is refused, not
 * guessed at. Hand-written because `new URL()` would also accept and rewrite forms a Host header
 * must not have (`a@b`, percent-escapes, IPv4 shorthands like `127.1`).
 */
export function parseHostHeader(header: string): string | undefined {
  if (header.startsWith('[')) {
    const close = header.indexOf(']');
    if (close === -1 || !validPort(header.slice(close + 1), true)) return undefined;
    const address = header.slice(1, close);
    // WHATWG URL gives an IPv6 literal its one canonical form, as browsers send it: [0:0::1] -> ::1.
    return isIP(address) === 6 ? new URL(`http://[${address}]`).hostname.slice(1, -1) : undefined;
  }
  const colon = header.indexOf(':');
  const name = colon === -1 ? header : header.slice(0, colon);
  if (colon !== -1 && !validPort(header.slice(colon), false)) return undefined;
  const host = (name.endsWith('.') ? name.slice(0, -1) : name).toLowerCase();
  return /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(host) ? host : undefined;
}

/** `:8080` (or nothing, after an IPv6 literal). */
function validPort(rest: string, optional: boolean): boolean {
  if (rest === '') return optional;
  return /^:[0-9]{1,5}$/.test(rest);
}

/**
 * localhost, *.localhost (RFC 6761: always loopback), 127.0.0.0/8, ::1 and 127.0.0.0/8 mapped
 * into IPv6 (canonical form `::ffff:7f00:1`).
 */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1' || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(host);
}

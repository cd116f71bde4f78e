import type { IncomingMessage } from 'node:http';

/** The subprotocol browsers pass their key as (they cannot set headers on a WebSocket), as OpenAI's browser client does. */
const KEY_PROTOCOL = 'openai-insecure-api-key.';

/** The subprotocols the client offered (`Sec-WebSocket-Protocol`), in its order. */
export function offeredProtocols(req: IncomingMessage): string[] {
  const header = req.headers['sec-websocket-protocol'];
  if (typeof header !== 'string') return [];
  return header
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/**
 * A browser's key, passed as the `openai-insecure-api-key.<key>` subprotocol, becomes the
 * request's `Authorization: Bearer` header, so that it is checked as every other request's key
 * is. A request that has an Authorization header keeps it.
 */
export function keyFromProtocols(req: IncomingMessage): void {
  if (req.headers.authorization) return;
  const keyed = offeredProtocols(req).find((p) => p.startsWith(KEY_PROTOCOL));
  if (keyed) req.headers.authorization = `Bearer ${keyed.slice(KEY_PROTOCOL.length)}`;
}

/** The subprotocols that may go on to the upstream: never the one carrying sluice's key. */
export function upstreamProtocols(req: IncomingMessage): string[] {
  return offeredProtocols(req).filter((p) => !p.startsWith(KEY_PROTOCOL));
}

/**
 * The subprotocol sluice answers the client's handshake with: `realtime` when offered (as
 * OpenAI answers), else the first that is not the key's; false when none may be chosen.
 */
export function chooseProtocol(offered: ReadonlySet<string>): string | false {
  if (offered.has('realtime')) return 'realtime';
  for (const p of offered) if (!p.startsWith(KEY_PROTOCOL)) return p;
  return false;
}

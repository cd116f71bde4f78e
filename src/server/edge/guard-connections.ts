import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { errors } from '../../errors/catalog.ts';
import { type ClientAddressing, clientKey, normalizeAddress } from '../../protocol/http/client-address.ts';
import { ConnectionGuard } from './connection-guard.ts';
import { RequestsPerClient } from './requests-per-client.ts';

export type ConnectionCounters = {
  refused(reason: 'per_client' | 'max_connections' | 'per_client_forwarded'): void;
  reclaimed(): void;
};

export interface GuardedConnections {
  /**
   * A request that came through a trusted proxy: throws 429 `too_many_client_requests` when its
   * forwarded client has `max_connections_per_client` requests in flight; else counts it until
   * its response closes. Nothing for a direct client (its connections are counted instead).
   */
  admitRequest(req: IncomingMessage, res: ServerResponse): void;
  /** Connections that never sent a request (a shutdown closes them itself). */
  neverUsed(): Iterable<Socket>;
}

/**
 * The per-client and global connection caps on a node:http server (connection-guard.ts), in
 * place of node's `maxConnections`, and the per-request cap for clients behind a trusted proxy
 * (requests-per-client.ts). Per process: under `sluice serve --workers N` each worker has its own
 * caps, and the kernel spreads a client's connections over the workers.
 */
export function guardConnections(
  server: Server,
  limits: { max_connections: number; max_connections_per_client: number },
  addressing: ClientAddressing,
  counters?: ConnectionCounters,
): GuardedConnections {
  const guard = new ConnectionGuard<Socket>({ max: limits.max_connections, perClient: limits.max_connections_per_client }, () =>
    counters?.reclaimed(),
  );
  const forwarded = new RequestsPerClient(limits.max_connections_per_client);
  server.on('connection', (socket: Socket) => {
    const peer = socket.remoteAddress;
    const client = addressing.isTrustedProxy(peer) ? null : clientKey(normalizeAddress(peer ?? ''));
    const refused = guard.accept(socket, client);
    if (refused) {
      counters?.refused(refused);
      socket.destroy();
      return;
    }
    socket.once('close', () => guard.closed(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    guard.requestStarted(socket);
    res.once('close', () => guard.requestEnded(socket));
  });
  return {
    admitRequest(req, res) {
      if (guard.clientOf(req.socket) !== null) return;
      const client = clientKey(addressing.clientOf(req));
      if (!forwarded.enter(client)) {
        counters?.refused('per_client_forwarded');
        throw errors.clientRequestLimit(limits.max_connections_per_client);
      }
      res.once('close', () => forwarded.leave(client));
    },
    neverUsed: () => guard.neverUsed(),
  };
}

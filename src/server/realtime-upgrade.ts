import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { errors } from '../errors/catalog.ts';
import { toGatewayError } from '../errors/gateway-error.ts';
import { endpointContext } from '../pipeline/endpoint-context.ts';
import { refuseUpgrade } from '../protocol/http/refuse-upgrade.ts';
import { openRealtimeSession, realtimeServer } from '../surfaces/realtime/open-session.ts';
import type { RelaySession } from '../surfaces/realtime/relay-session.ts';
import type { GatewayContext } from './gateway-context.ts';
import { decodePathParam } from './route-table.ts';
import { newRequestId } from './request-id.ts';

/** `/v1/realtime`, or a project's endpoint's `/{project}/{endpoint}/v1/realtime`. */
const ENDPOINT_PATH = /^\/([^/]+)\/([^/]+)\/v1\/realtime$/;

/** The Realtime sessions of a gateway: the upgrades it accepts, and the sessions open. */
export interface RealtimeUpgrades {
  /** Sessions open now. */
  readonly open: number;
  /** Ends every open session (1001, shutdown) and waits for their rows. */
  close(): Promise<void>;
}

/**
 * GET /v1/realtime (docs/api/realtime.md): node:http hands WebSocket upgrades to its `upgrade`
 * event, never to the request handler, so they are taken here; any other path upgraded is the
 * route table's 404, as an HTTP error on the socket. `context` is read when each upgrade arrives
 * (a reload applies to the sessions to come).
 */
export function acceptRealtime(server: Server, context: () => GatewayContext): RealtimeUpgrades {
  const wss = realtimeServer();
  const sessions = new Set<RelaySession>();
  const opened = (session: RelaySession) => {
    sessions.add(session);
    void session.ended.then(() => sessions.delete(session));
  };
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // node:http leaves an upgraded socket without its error handler: a client that resets the
    // connection while its upgrade is checked must not crash the process.
    socket.on('error', () => {});
    const requestId = newRequestId();
    void upgrade(req, socket, head, requestId, context(), wss, opened).catch((err: unknown) =>
      refuseUpgrade(socket, toGatewayError(err), requestId),
    );
  });
  return {
    get open() {
      return sessions.size;
    },
    async close() {
      const ending = [...sessions].map((session) => {
        session.shutdown();
        return session.ended;
      });
      await Promise.all(ending);
      wss.close();
    },
  };
}

async function upgrade(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  requestId: string,
  ctx: GatewayContext,
  server: ReturnType<typeof realtimeServer>,
  opened: (session: RelaySession) => void,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://sluice');
  const model = url.searchParams.get('model') ?? undefined;
  const session = { req, socket, head, requestId, model, server, opened };
  if (url.pathname === '/v1/realtime') return openRealtimeSession({ ...session, ctx });
  const match = ENDPOINT_PATH.exec(url.pathname);
  if (!match) {
    return refuseUpgrade(socket, errors.routeNotFound(req.method ?? 'GET', url.pathname), requestId);
  }
  const project = decodePathParam(match[1], 'project');
  const name = decodePathParam(match[2], 'endpoint');
  const endpoint = await ctx.governance.endpoint(project, name);
  // Without `model`, the endpoint's own; with one, resolved as on its other routes (endpoint-context.ts).
  return openRealtimeSession({ ...session, model: model ?? endpoint?.model, ctx: endpointContext(ctx, project, name, endpoint) });
}

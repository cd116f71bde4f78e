import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { errors } from '../errors/catalog.ts';
import { toGatewayError } from '../errors/gateway-error.ts';
import { endpointContext } from '../pipeline/endpoint-context.ts';
import type { WebSocketServer } from 'ws';
import { refuseUpgrade } from '../protocol/http/refuse-upgrade.ts';
import type { openRealtimeSession } from '../surfaces/realtime/open-session.ts';
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

/** The relay's opening and the WebSocket server its handshakes are accepted with. */
interface Relay {
  open: typeof openRealtimeSession;
  wss: WebSocketServer;
}

/**
 * GET /v1/realtime (docs/api/realtime.md): node:http hands WebSocket upgrades to its `upgrade`
 * event, never to the request handler, so they are taken here; any other path upgraded is the
 * route table's 404, as an HTTP error on the socket. `context` is read when each upgrade arrives
 * (a reload applies to the sessions to come).
 *
 * The relay, and `ws` with it (nothing else in sluice uses it), is loaded by the first session's
 * upgrade: a gateway nobody opens a Realtime session on never holds it (`ws` alone is 1.7 MiB of
 * heap in a bare Node 24). `sluice serve --workers 1` idle, dist/, six starts each on the same
 * host minutes apart: heap used 33.8 -> 33.3 MiB, RSS median 102.5 -> 101.8 MiB, against the
 * bench's idle target of 100. The first session waits for the import once.
 */
export function acceptRealtime(server: Server, context: () => GatewayContext): RealtimeUpgrades {
  let loading: Promise<Relay> | undefined;
  const relay = () =>
    (loading ??= import('../surfaces/realtime/open-session.ts').then((m) => ({
      open: m.openRealtimeSession,
      wss: m.realtimeServer(),
    })));
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
    void upgrade(req, socket, head, requestId, context(), relay, opened).catch((err: unknown) =>
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
      // Never loaded (no session was opened), or its import failed: no server to close.
      (await loading?.catch(() => undefined))?.wss.close();
    },
  };
}

async function upgrade(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  requestId: string,
  ctx: GatewayContext,
  relay: () => Promise<Relay>,
  opened: (session: RelaySession) => void,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://sluice');
  const model = url.searchParams.get('model') ?? undefined;
  const direct = url.pathname === '/v1/realtime';
  const match = direct ? null : ENDPOINT_PATH.exec(url.pathname);
  if (!direct && !match) {
    return refuseUpgrade(socket, errors.routeNotFound(req.method ?? 'GET', url.pathname), requestId);
  }
  const { open, wss } = await relay();
  const session = { req, socket, head, requestId, model, server: wss, opened };
  if (!match) return open({ ...session, ctx });
  const project = decodePathParam(match[1], 'project');
  const name = decodePathParam(match[2], 'endpoint');
  const endpoint = await ctx.governance.endpoint(project, name);
  // Without `model`, the endpoint's own; with one, resolved as on its other routes (endpoint-context.ts).
  return open({ ...session, model: model ?? endpoint?.model, ctx: endpointContext(ctx, project, name, endpoint) });
}

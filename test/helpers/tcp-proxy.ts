import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a real server (Postgres, Redis), which a test can break the
 * ways a network breaks. Stopping the shared server is not an option (other tests use it), and to
 * the client side a broken proxy is the same failure.
 */
export interface TcpProxy {
  port: number;
  /** Connections opened through the proxy so far. */
  readonly connections: number;
  /**
   * Reads so far from the clients (requests) and from the server (answers). A client that
   * pipelines writes its batch at once, so a batch arrives as one read: the client-side count is
   * the round trips a client made (Redis admission, test/e2e/limits-round-trips.test.ts).
   */
  readonly reads: { fromClients: number; fromServer: number };
  /** Resets every open connection (RST) and refuses new ones, as a database that went away. */
  cut(): Promise<void>;
  /**
   * Half-open: every connection, open or new, stays up but nothing is forwarded either way, as a
   * peer that vanished behind a NAT or a stuck load balancer. Neither side gets an error.
   */
  stall(): void;
  /**
   * A slow server: every answer is held `ms` before it is forwarded, in order, on open and new
   * connections alike (0: at once again). Requests still go through at once.
   */
  slow(ms: number): void;
  /**
   * Accepts and forwards new connections again (on the same port). Stalled connections stay
   * stalled, as a real half-open connection never recovers: the client has to give up on them.
   */
  restore(): Promise<void>;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
  stalled: boolean;
  /** The answers held back (slow()), forwarded one after the other, each at its own time. */
  held: Promise<void>;
  heldUntil: number;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let stalling = false;
  let slowMs = 0;
  let connections = 0;
  const reads = { fromClients: 0, fromServer: 0 };

  const server: Server = createServer((client) => {
    connections++;
    const upstream = connect(targetPort, targetHost);
    const pair: Pair = { client, upstream, stalled: stalling, held: Promise.resolve(), heldUntil: 0 };
    pairs.add(pair);
    // Forwarded by hand rather than piped, so a stall can swallow bytes without closing anything.
    client.on('data', (bytes) => {
      reads.fromClients++;
      if (!pair.stalled) upstream.write(bytes);
    });
    upstream.on('data', (bytes) => {
      reads.fromServer++;
      if (pair.stalled) return;
      if (slowMs === 0 && pair.heldUntil <= Date.now()) {
        client.write(bytes);
        return;
      }
      // Never before what was held earlier: a reordered answer would be a corrupt stream.
      const at = Math.max(Date.now() + slowMs, pair.heldUntil);
      pair.heldUntil = at;
      pair.held = pair.held
        .then(() => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now()))))
        .then(() => {
          if (!pair.stalled && !client.destroyed) client.write(bytes);
        });
    });
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    // A cut connection errors on both ends; that is the point, not a test failure.
    client.on('error', () => {});
    upstream.on('error', () => {});
  });

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const port = (server.address() as AddressInfo).port;

  const stopListening = () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));

  return {
    port,
    get connections() {
      return connections;
    },
    reads,
    async cut() {
      const closed = stopListening();
      for (const { client, upstream } of pairs) {
        client.resetAndDestroy();
        upstream.destroy();
      }
      await closed;
    },
    stall() {
      stalling = true;
      for (const pair of pairs) pair.stalled = true;
    },
    slow(ms: number) {
      slowMs = ms;
    },
    async restore() {
      stalling = false;
      if (!server.listening) await listen(port);
    },
    async close() {
      const closed = stopListening();
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await closed;
    },
  };
}

/** A database URL pointed at the proxy instead of the server. */
export function viaProxy(url: string, proxy: TcpProxy): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.toString();
}

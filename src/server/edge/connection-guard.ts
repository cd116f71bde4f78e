/** What the guard needs of a connection (a net.Socket). */
export interface Closable {
  destroy(): void;
}

export type ConnectionRefusal = 'per_client' | 'max_connections';

export interface ConnectionLimits {
  /** `server.max_connections`. */
  max: number;
  /** `server.max_connections_per_client`. */
  perClient: number;
}

/**
 * The open connections, by client and by state, so that one client cannot take them all and a
 * full server makes room. Node's own `maxConnections` only refuses new connections once full: 10,000
 * idle sockets from one client reset every other client's connections for the 10-14 s the
 * headers timeout took to close them, and nothing stopped the client reopening them.
 *
 * - A client (an address, or an IPv6 /64, client-address.ts) holds at most `perClient`
 *   connections; past it its new ones are closed at once, whatever the total.
 * - At `max`, a new connection takes the place of an idle one: first one that never sent a
 *   request (the oldest first: a flood's sockets, or a preconnect), else a keep-alive one between
 *   requests (idle longest first). A connection with a request in progress is never closed for
 *   another. Only when every connection is busy is the new one closed.
 * - A trusted proxy's connections (client `null`) carry many clients' requests: they count
 *   toward `max` only (its clients are limited per request, requests-per-client.ts).
 *
 * The state is per socket in a Map and two insertion-ordered Sets (a Set's order is its LRU
 * order: a socket going idle is added at the end), so every step is O(1).
 */
export class ConnectionGuard<S extends Closable> {
  /** Every open connection and its client (null: a trusted proxy). */
  private readonly clients = new Map<S, string | null>();
  private readonly perClient = new Map<string, number>();
  /** Connections that have not sent a request yet, oldest first. */
  private readonly unused = new Set<S>();
  /** Connections between requests, idle longest first. */
  private readonly idle = new Set<S>();
  private readonly limits: ConnectionLimits;
  private readonly reclaimed: () => void;

  constructor(limits: ConnectionLimits, reclaimed: () => void = () => {}) {
    this.limits = limits;
    this.reclaimed = reclaimed;
  }

  get open(): number {
    return this.clients.size;
  }

  /** Connections that never sent a request (a shutdown closes them: node's closeIdleConnections skips them). */
  neverUsed(): Iterable<S> {
    return this.unused;
  }

  /** A new connection: undefined when it may stay, else why it must be closed (the caller closes it). */
  accept(socket: S, client: string | null): ConnectionRefusal | undefined {
    const held = client === null ? 0 : (this.perClient.get(client) ?? 0);
    if (held >= this.limits.perClient) return 'per_client';
    if (this.clients.size >= this.limits.max && !this.reclaimOne()) return 'max_connections';
    this.clients.set(socket, client);
    if (client !== null) this.perClient.set(client, held + 1);
    this.unused.add(socket);
    return undefined;
  }

  /** The client of an open connection: null for a trusted proxy's, undefined when not open. */
  clientOf(socket: S): string | null | undefined {
    return this.clients.get(socket);
  }

  requestStarted(socket: S): void {
    this.unused.delete(socket);
    this.idle.delete(socket);
  }

  requestEnded(socket: S): void {
    // A pipelined request may still be queued on it: rare (no browser or SDK pipelines), and at
    // worst it is lost with the connection if the server is full.
    if (this.clients.has(socket)) this.idle.add(socket);
  }

  closed(socket: S): void {
    const client = this.clients.get(socket);
    if (client === undefined) return;
    this.clients.delete(socket);
    this.unused.delete(socket);
    this.idle.delete(socket);
    if (client === null) return;
    const held = this.perClient.get(client) ?? 1;
    if (held <= 1) this.perClient.delete(client);
    else this.perClient.set(client, held - 1);
  }

  /** Closes the idle connection that is first in line; false when there is none. */
  private reclaimOne(): boolean {
    const victim = first(this.unused) ?? first(this.idle);
    if (victim === undefined) return false;
    this.closed(victim);
    victim.destroy();
    this.reclaimed();
    return true;
  }
}

function first<T>(set: Set<T>): T | undefined {
  for (const value of set) return value;
  return undefined;
}

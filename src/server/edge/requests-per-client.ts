/**
 * Requests in flight per client behind a trusted proxy: the per-client connection cap
 * (connection-guard.ts) applied where a connection does not stand for one client. A proxy keeps
 * its own pool of connections to sluice and sends any client's requests over any of them, so the
 * forwarded client is only known per request; what that client holds of sluice is then the
 * requests it has in flight (each occupies one of the proxy's connections while it lasts, a
 * stream for minutes). Past the cap the request is answered 429 and the connection stays usable.
 * The map holds only clients with a request in flight.
 */
export class RequestsPerClient {
  private readonly inFlight = new Map<string, number>();
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** False when the client is at the cap (nothing counted); else counted until `leave`. */
  enter(client: string): boolean {
    const held = this.inFlight.get(client) ?? 0;
    if (held >= this.limit) return false;
    this.inFlight.set(client, held + 1);
    return true;
  }

  leave(client: string): void {
    const held = this.inFlight.get(client) ?? 1;
    if (held <= 1) this.inFlight.delete(client);
    else this.inFlight.set(client, held - 1);
  }

  get clients(): number {
    return this.inFlight.size;
  }
}

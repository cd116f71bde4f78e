import type { ServerResponse } from 'node:http';

/** The response header with sluice's own time on a request (docs/operations/observability.md "Overhead header"). */
export const OVERHEAD_HEADER = 'x-sluice-overhead-ms';

/**
 * sluice's own time on a request: from its arrival to the upstream call (authentication, parsing,
 * routing, admission, accounting set-up, store and Redis round trips included), less the time spent
 * waiting for the client's body. A request refused before any upstream call counts its time to the
 * refusal. What the upstream takes, and the relay of its answer, are not in it (README says why).
 */
export class OverheadClock {
  private readonly arrived = performance.now();
  private waited = 0;
  private stopped: number | null = null;

  /** Time spent awaiting `pending` (the client's body) is the client's, not sluice's. */
  async excluding<T>(pending: Promise<T>): Promise<T> {
    const from = performance.now();
    try {
      return await pending;
    } finally {
      this.waited += performance.now() - from;
    }
  }

  /** The upstream is called (or the request failed before it): the figure is fixed and sent as a header. */
  stop(res: ServerResponse): void {
    if (this.stopped !== null) return;
    this.stopped = Math.max(0, performance.now() - this.arrived - this.waited);
    if (!res.headersSent) res.setHeader(OVERHEAD_HEADER, this.stopped.toFixed(2));
  }

  /** Milliseconds, or null when the request ended without reaching either point. */
  get ms(): number | null {
    return this.stopped === null ? null : Math.round(this.stopped * 100) / 100;
  }
}

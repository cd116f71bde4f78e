/** Crashes within this window count towards a restart storm. */
const STORM_WINDOW_MS = 60_000;
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 30_000;

export type RestartDecision = { restartInMs: number } | { giveUp: string };

/**
 * When to start a crashed worker again: after 250 ms, doubling with each crash of any worker
 * within the last minute (up to 30 s), so a worker that dies at once does not spin; past
 * max(5, 2 x workers) crashes within that minute, restarting is not helping, and the gateway stops.
 */
export class RestartPolicy {
  private readonly crashes: number[] = [];
  private readonly limit: number;

  constructor(workers: number) {
    this.limit = Math.max(5, 2 * workers);
  }

  crashed(now: number): RestartDecision {
    this.crashes.push(now);
    while (this.crashes[0] < now - STORM_WINDOW_MS) this.crashes.shift();
    const recent = this.crashes.length;
    if (recent > this.limit) return { giveUp: `${recent} crashes within ${STORM_WINDOW_MS / 1000}s` };
    return { restartInMs: Math.min(FIRST_DELAY_MS * 2 ** (recent - 1), MAX_DELAY_MS) };
  }
}

/**
 * GET /readyz: whether this instance can serve requests now, for a load balancer or Kubernetes'
 * readiness probe (GET /healthz stays liveness: the process answers). Probes come every few
 * seconds from every prober, so a check is one cheap round trip, and each is bounded by
 * CHECK_TIMEOUT_MS: a stalled database must make the answer a quick 503, within the probe's own
 * timeout (deploy/kubernetes gives it 3 s), not a probe that hangs until the prober gives up.
 */
export const CHECK_TIMEOUT_MS = 1_000;

export interface ReadinessCheck {
  /** A failing required check means the gateway cannot serve: /readyz answers 503. */
  required: boolean;
  /**
   * Resolves with what to report when the dependency answers, rejects when it does not (a
   * NotReady's message is reported; any other error is reported as `failed`). Undefined: the
   * dependency is not in use (`off`).
   */
  probe: (() => Promise<Record<string, unknown> | void>) | undefined;
}

/** A probe's failure whose message is safe to show on an open endpoint (no host names, no upstream text). */
export class NotReady extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'NotReady';
  }
}

export type CheckReport =
  | { state: 'ok'; [detail: string]: unknown }
  | { state: 'down'; required: boolean; reason: string }
  | { state: 'off' };

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, CheckReport>;
}

/**
 * Runs every check at once on each call. A check still running from an earlier probe is joined,
 * not started again: a probe that timed out against a stalled database leaves its query waiting
 * for the pool's own timeout, and probes every few seconds must not pile more of them onto the
 * pool the requests use.
 */
export function createReadiness(
  checks: Record<string, ReadinessCheck>,
  timeoutMs = CHECK_TIMEOUT_MS,
): () => Promise<ReadinessReport> {
  const running = new Map<string, Promise<Record<string, unknown> | void>>();
  const start = (name: string, probe: NonNullable<ReadinessCheck['probe']>) => {
    let run = running.get(name);
    if (!run) {
      run = probe().finally(() => running.delete(name));
      running.set(name, run);
    }
    return run;
  };
  const report = async (name: string, check: ReadinessCheck): Promise<CheckReport> => {
    if (!check.probe) return { state: 'off' };
    try {
      const detail = await withinTimeout(start(name, check.probe), timeoutMs);
      return { state: 'ok', ...detail };
    } catch (err) {
      const reason = err instanceof NotReady ? err.message : 'failed';
      return { state: 'down', required: check.required, reason };
    }
  };
  return async () => {
    const names = Object.keys(checks);
    const reports = await Promise.all(names.map((name) => report(name, checks[name])));
    const ready = reports.every((r) => r.state !== 'down' || !r.required);
    return { ready, checks: Object.fromEntries(names.map((name, i) => [name, reports[i]])) };
  };
}

async function withinTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NotReady(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

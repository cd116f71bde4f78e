import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { GatewayMetrics } from './metrics.ts';

/**
 * One scrape of `sluice serve --workers N` (docs/operations/scale-out.md "Every core of one machine"): the worker whose
 * connection it came on asks the supervisor (`metrics-ask`), the supervisor collects every
 * worker's registry as JSON (`metrics-collect` / `metrics-collected`, cli/gather-metrics.ts), sums
 * them with prom-client's AggregatorRegistry and answers the asking worker (`metrics-answer`),
 * which serves the text. The supervisor keeps to its job (it accepts no connection); the workers
 * keep theirs (auth, the route, the answer).
 */
export type WorkerMetricsMessage =
  | { sluice: 'metrics-ask'; id: number }
  | { sluice: 'metrics-answer'; id: number; text?: string; error?: string }
  | { sluice: 'metrics-collect'; id: number }
  | { sluice: 'metrics-collected'; id: number; metrics?: WorkerMetricsJson; error?: string };

/** A registry's metrics as prom-client's getMetricsAsJSON gives them (what AggregatorRegistry.aggregate sums). */
export type WorkerMetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/** The IPC channel to the supervisor (`process` in a cluster worker). */
export interface SupervisorChannel {
  send(message: WorkerMetricsMessage): void;
  on(event: 'message', listener: (message: unknown) => void): void;
}

/** Longer than the supervisor's own wait for the workers (gather-metrics.ts), so its answer comes first. */
const ANSWER_TIMEOUT_MS = 10_000;

export function isWorkerMetricsMessage(message: unknown): message is WorkerMetricsMessage {
  if (message === null || typeof message !== 'object') return false;
  const { sluice, id } = message as { sluice?: unknown; id?: unknown };
  return typeof sluice === 'string' && sluice.startsWith('metrics-') && typeof id === 'number';
}

/**
 * Makes a worker's /metrics the whole gateway's: its scrapes go to the supervisor, and it hands
 * the supervisor its own registry whenever any worker is scraped.
 */
export function shareMetricsAcrossWorkers(metrics: GatewayMetrics, supervisor: SupervisorChannel): void {
  let next = 0;
  const waiting = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  supervisor.on('message', (message) => {
    if (!isWorkerMetricsMessage(message)) return;
    if (message.sluice === 'metrics-collect') {
      metrics.registry.getMetricsAsJSON().then(
        (json) => supervisor.send({ sluice: 'metrics-collected', id: message.id, metrics: json }),
        (err: unknown) => supervisor.send({ sluice: 'metrics-collected', id: message.id, error: String(err) }),
      );
    } else if (message.sluice === 'metrics-answer') {
      const pending = waiting.get(message.id);
      if (!pending) return;
      waiting.delete(message.id);
      clearTimeout(pending.timer);
      if (message.text !== undefined) pending.resolve(message.text);
      else pending.reject(new Error(message.error ?? 'no metrics in the answer'));
    }
  });
  metrics.scrape = () =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`the supervisor did not answer within ${ANSWER_TIMEOUT_MS} ms`));
      }, ANSWER_TIMEOUT_MS).unref();
      waiting.set(id, { resolve, reject, timer });
      supervisor.send({ sluice: 'metrics-ask', id });
    });
}

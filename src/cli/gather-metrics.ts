import type { Worker } from 'node:cluster';
import type { WorkerMetricsJson, WorkerMetricsMessage } from '../telemetry/worker-metrics.ts';
import { WorkerRounds } from './worker-rounds.ts';

/** A worker that has not handed in its metrics by then is taken as stuck: the scrape fails (503). */
const COLLECT_TIMEOUT_MS = 5_000;

type Collected = Extract<WorkerMetricsMessage, { sluice: 'metrics-collected' }>;

/**
 * The supervisor's side of a scrape (telemetry/worker-metrics.ts): every listening worker's
 * registry, summed by prom-client's AggregatorRegistry (counters and gauges added, histograms
 * merged bucket by bucket), for the worker that was asked. A worker that exits during a round is
 * left out of it: its counts are gone with it, as they would be with a single process.
 */
export class MetricsGatherer {
  private readonly rounds: WorkerRounds<Collected>;
  private readonly timeoutMs: number;

  constructor(timeoutMs = COLLECT_TIMEOUT_MS) {
    this.timeoutMs = timeoutMs;
    this.rounds = new WorkerRounds(
      (worker, id) => worker.send({ sluice: 'metrics-collect', id } satisfies WorkerMetricsMessage),
      timeoutMs,
    );
  }

  /** A worker was scraped: it gets the sum over `workers` (answered by the worker's own `id`). */
  ask(asker: Worker, id: number, workers: Iterable<Worker>): void {
    const answer = (message: WorkerMetricsMessage) => {
      if (asker.isConnected()) asker.send(message);
    };
    this.gather(workers).then(
      (text) => answer({ sluice: 'metrics-answer', id, text }),
      (err: unknown) => answer({ sluice: 'metrics-answer', id, error: (err as Error).message }),
    );
  }

  /** A worker's registry for a round. */
  collected(worker: Worker, message: Collected): void {
    this.rounds.answered(worker, message.id, message);
  }

  /** A worker exited: no round waits for it. */
  left(worker: Worker): void {
    this.rounds.left(worker);
  }

  private async gather(workers: Iterable<Worker>): Promise<string> {
    const { answers, silent } = await this.rounds.run(workers);
    if (silent.length > 0)
      throw new Error(`${silent.length} worker(s) did not hand in their metrics within ${this.timeoutMs} ms`);
    const collected: WorkerMetricsJson[] = [];
    for (const message of answers.values()) {
      if (message.metrics === undefined)
        throw new Error(`a worker could not read its metrics: ${message.error ?? 'no reason given'}`);
      collected.push(message.metrics);
    }
    // Loaded on the first scrape: the supervisor otherwise loads no metrics code (docs/operations/scale-out.md "Every core of one machine").
    const { AggregatorRegistry } = await import('prom-client');
    return AggregatorRegistry.aggregate(collected).metrics();
  }
}

import type { Worker } from 'node:cluster';
import type { WorkerMetricsJson, WorkerMetricsMessage } from '../telemetry/worker-metrics.ts';

/** A worker that has not handed in its metrics by then is taken as stuck: the scrape fails (503). */
const COLLECT_TIMEOUT_MS = 5_000;

interface Round {
  waiting: Set<Worker>;
  collected: WorkerMetricsJson[];
  done: (error: Error | null) => void;
}

/**
 * The supervisor's side of a scrape (telemetry/worker-metrics.ts): every listening worker's
 * registry, summed by prom-client's AggregatorRegistry (counters and gauges added, histograms
 * merged bucket by bucket), for the worker that was asked. A worker that exits during a round is
 * left out of it: its counts are gone with it, as they would be with a single process.
 */
export class MetricsGatherer {
  private next = 0;
  private readonly rounds = new Map<number, Round>();
  private readonly timeoutMs: number;

  constructor(timeoutMs = COLLECT_TIMEOUT_MS) {
    this.timeoutMs = timeoutMs;
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
  collected(worker: Worker, message: Extract<WorkerMetricsMessage, { sluice: 'metrics-collected' }>): void {
    const round = this.rounds.get(message.id);
    if (!round?.waiting.delete(worker)) return;
    if (message.metrics === undefined) {
      round.done(new Error(`a worker could not read its metrics: ${message.error ?? 'no reason given'}`));
      return;
    }
    round.collected.push(message.metrics);
    if (round.waiting.size === 0) round.done(null);
  }

  /** A worker exited: no round waits for it. */
  left(worker: Worker): void {
    for (const round of this.rounds.values()) {
      if (round.waiting.delete(worker) && round.waiting.size === 0) round.done(null);
    }
  }

  private async gather(workers: Iterable<Worker>): Promise<string> {
    const id = this.next++;
    const waiting = new Set([...workers].filter((w) => w.isConnected()));
    const collected: WorkerMetricsJson[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => round.done(new Error(`${round.waiting.size} worker(s) did not hand in their metrics within ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
      const round: Round = {
        waiting,
        collected,
        done: (error) => {
          clearTimeout(timer);
          this.rounds.delete(id);
          if (error) reject(error);
          else resolve();
        },
      };
      this.rounds.set(id, round);
      for (const worker of waiting) worker.send({ sluice: 'metrics-collect', id } satisfies WorkerMetricsMessage);
      if (waiting.size === 0) round.done(null);
    });
    // Loaded on the first scrape: the supervisor otherwise loads no metrics code (docs/operations/scale-out.md "Every core of one machine").
    const { AggregatorRegistry } = await import('prom-client');
    return AggregatorRegistry.aggregate(collected).metrics();
  }
}

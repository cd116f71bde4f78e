import type { Worker } from 'node:cluster';

/** What each worker answered a round, and which did not answer in time. */
export interface RoundResult<A> {
  answers: Map<Worker, A>;
  silent: Worker[];
}

interface Round<A> {
  waiting: Set<Worker>;
  answers: Map<Worker, A>;
  done: () => void;
}

/**
 * The supervisor's side of a question put to every worker over IPC (a scrape's metrics, a
 * reload): each round has its own id, which the workers send back with their answers. A worker
 * that exits during a round is left out of it; one that has not answered within `timeoutMs` is
 * reported silent, and the round ends without it.
 */
export class WorkerRounds<A> {
  private next = 0;
  private readonly rounds = new Map<number, Round<A>>();
  private readonly send: (worker: Worker, id: number) => void;
  private readonly timeoutMs: number;

  /** `send`: puts the question of round `id` to a worker. */
  constructor(send: (worker: Worker, id: number) => void, timeoutMs: number) {
    this.send = send;
    this.timeoutMs = timeoutMs;
  }

  run(workers: Iterable<Worker>): Promise<RoundResult<A>> {
    const id = this.next++;
    const waiting = new Set([...workers].filter((w) => w.isConnected()));
    const answers = new Map<Worker, A>();
    return new Promise((resolve) => {
      const timer = setTimeout(() => round.done(), this.timeoutMs);
      const round: Round<A> = {
        waiting,
        answers,
        done: () => {
          clearTimeout(timer);
          this.rounds.delete(id);
          resolve({ answers, silent: [...waiting] });
        },
      };
      this.rounds.set(id, round);
      for (const worker of waiting) this.send(worker, id);
      if (waiting.size === 0) round.done();
    });
  }

  /** A worker's answer to round `id` (a late one, or one to a round that is over, is dropped). */
  answered(worker: Worker, id: number, answer: A): void {
    const round = this.rounds.get(id);
    if (!round?.waiting.delete(worker)) return;
    round.answers.set(worker, answer);
    if (round.waiting.size === 0) round.done();
  }

  /** A worker exited: no round waits for it. */
  left(worker: Worker): void {
    for (const round of this.rounds.values()) {
      if (round.waiting.delete(worker) && round.waiting.size === 0) round.done();
    }
  }
}

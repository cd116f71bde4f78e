import type { Worker } from 'node:cluster';
import type { InstanceReload, ReloadResult } from '../server/reload-result.ts';
import type { WorkerReloadMessage } from './worker-reload.ts';
import { WorkerRounds } from './worker-rounds.ts';

/** A worker that has not reloaded by then is taken as stuck (a reload is a file read and a rebuild: milliseconds). */
const RELOAD_TIMEOUT_MS = 10_000;

/**
 * The supervisor's side of a reload (cli/worker-reload.ts): every listening worker reloads, and
 * each one's result is logged here and given to the worker that asked, if one did.
 */
export class ReloadGatherer {
  private readonly rounds: WorkerRounds<ReloadResult>;
  private readonly slotOf: (worker: Worker) => number | undefined;
  private readonly timeoutMs: number;

  constructor(slotOf: (worker: Worker) => number | undefined, timeoutMs = RELOAD_TIMEOUT_MS) {
    this.slotOf = slotOf;
    this.timeoutMs = timeoutMs;
    this.rounds = new WorkerRounds(
      (worker, id) => worker.send({ sluice: 'reload-run', id } satisfies WorkerReloadMessage),
      timeoutMs,
    );
  }

  /** Every worker of `workers` reloads; their results by slot, each also logged with `why` (SIGHUP, POST /admin/reload). */
  async reloadAll(workers: Iterable<Worker>, why: string): Promise<InstanceReload[]> {
    const { answers, silent } = await this.rounds.run(workers);
    const of = (worker: Worker) => ({ worker: this.slotOf(worker), pid: worker.process.pid });
    const instances: InstanceReload[] = [
      ...[...answers].map(([worker, result]) => ({ ...result, ...of(worker) })),
      ...silent.map((worker) => ({
        ok: false as const,
        silent: true,
        problems: [`did not answer within ${this.timeoutMs / 1000} s`],
        ...of(worker),
      })),
    ].toSorted((a, b) => (a.worker ?? 0) - (b.worker ?? 0));
    for (const instance of instances) {
      const line = `${why}: ${reloadLine(instance)}`;
      if (instance.ok) console.log(line);
      else console.error(line);
    }
    return instances;
  }

  /** POST /admin/reload reached `asker`: every worker reloads, and the asker gets their results. */
  ask(asker: Worker, id: number, workers: Iterable<Worker>): void {
    void this.reloadAll(workers, 'POST /admin/reload').then((instances) => {
      if (asker.isConnected()) asker.send({ sluice: 'reload-answer', id, instances } satisfies WorkerReloadMessage);
    });
  }

  /** A worker's result for a round. */
  done(worker: Worker, message: Extract<WorkerReloadMessage, { sluice: 'reload-done' }>): void {
    this.rounds.answered(worker, message.id, message.result);
  }

  /** A worker exited: no round waits for it (its replacement starts with the file as it is now). */
  left(worker: Worker): void {
    this.rounds.left(worker);
  }
}

/** One worker's reload as a line of the supervisor's log. */
export function reloadLine(instance: InstanceReload): string {
  const who = `worker ${instance.worker ?? '?'} (pid ${instance.pid ?? '?'})`;
  if (!instance.ok) {
    return instance.silent
      ? `${who} ${instance.problems.join('; ')}; see its log`
      : `${who} refused the config and kept the running one: ${instance.problems.join('; ')}`;
  }
  const changed = instance.changed.length > 0 ? `${instance.changed.join(', ')} changed` : 'nothing changed';
  const waits = instance.restartRequired.length > 0 ? `; until a restart: ${instance.restartRequired.join(', ')}` : '';
  return `${who} reloaded the config: ${changed}${waits}`;
}

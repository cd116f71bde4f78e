import { errors } from '../errors/catalog.ts';
import type { Gateway } from '../server/app.ts';
import type { InstanceReload, ReloadResult } from '../server/reload-result.ts';

/**
 * A reload of `sluice serve --workers N` (docs/operations/reload.md): SIGHUP to the supervisor,
 * or POST /admin/reload to any worker, which asks the supervisor (`reload-ask`). The supervisor
 * has every listening worker reload (`reload-run` / `reload-done`, cli/gather-reloads.ts), logs
 * each one's result, and answers the asking worker with them all (`reload-answer`).
 */
export type WorkerReloadMessage =
  | { sluice: 'reload-ask'; id: number }
  | { sluice: 'reload-answer'; id: number; instances: InstanceReload[] }
  | { sluice: 'reload-run'; id: number }
  | { sluice: 'reload-done'; id: number; result: ReloadResult };

/** The IPC channel to the supervisor (`process` in a cluster worker). */
export interface ReloadChannel {
  send(message: WorkerReloadMessage): void;
  on(event: 'message', listener: (message: unknown) => void): void;
}

/** Longer than the supervisor's own wait for the workers (gather-reloads.ts), so its answer comes first. */
const ANSWER_TIMEOUT_MS = 15_000;

export function isWorkerReloadMessage(message: unknown): message is WorkerReloadMessage {
  if (message === null || typeof message !== 'object') return false;
  const { sluice, id } = message as { sluice?: unknown; id?: unknown };
  return typeof sluice === 'string' && sluice.startsWith('reload-') && typeof id === 'number';
}

/** Makes a worker reload when the supervisor says so, and its POST /admin/reload reach every worker. */
export function shareReloadsAcrossWorkers(gateway: Pick<Gateway, 'reload' | 'context'>, supervisor: ReloadChannel): void {
  let next = 0;
  const waiting = new Map<number, { resolve: (instances: InstanceReload[]) => void; timer: NodeJS.Timeout }>();
  supervisor.on('message', (message) => {
    if (!isWorkerReloadMessage(message)) return;
    if (message.sluice === 'reload-run') {
      supervisor.send({ sluice: 'reload-done', id: message.id, result: gateway.reload() });
    } else if (message.sluice === 'reload-answer') {
      const pending = waiting.get(message.id);
      if (!pending) return;
      waiting.delete(message.id);
      clearTimeout(pending.timer);
      pending.resolve(message.instances);
    }
  });
  gateway.context.reloadConfig = () =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(errors.reloadIncomplete(`the supervisor did not answer within ${ANSWER_TIMEOUT_MS / 1000} s`));
      }, ANSWER_TIMEOUT_MS).unref();
      waiting.set(id, { resolve, timer });
      supervisor.send({ sluice: 'reload-ask', id });
    });
}

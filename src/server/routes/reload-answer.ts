import { errors } from '../../errors/catalog.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import type { InstanceReload } from '../reload-result.ts';

type Applied = Extract<InstanceReload, { ok: true }>;
type NotApplied = Extract<InstanceReload, { ok: false }>;

/** POST /admin/reload's 200 body. */
export interface ReloadAnswer {
  object: 'sluice.config_reload';
  /** The keys whose new values are in effect. */
  changed: string[];
  /** The keys that changed in the file but keep their running values until a restart. */
  restart_required: string[];
  /** Under `sluice serve --workers N`: each worker's own reload. */
  workers?: { worker: number; pid: number | undefined; changed: string[]; restart_required: string[] }[];
}

/**
 * The answer to POST /admin/reload from each process's reload: 200 with what changed when every
 * one applied it; else the error: 422 when any refused it (every distinct problem and, under
 * workers, which ones refused it and which applied it), 503 when one did not answer.
 */
export function reloadAnswer(instances: readonly InstanceReload[]): ReloadAnswer | GatewayError {
  const applied = instances.filter((i): i is Applied => i.ok);
  const failed = instances.filter((i): i is NotApplied => !i.ok);
  const refused = failed.filter((i) => !i.silent);
  const silent = failed.filter((i) => i.silent);
  if (refused.length > 0) {
    const problems = [...new Set(refused.flatMap((i) => i.problems))].join('; ');
    const who = [tell(refused, 'refused it'), tell(applied, 'applied it'), tell(silent, 'did not answer')].filter(Boolean);
    return errors.configInvalid(instances.length > 1 ? `${problems} (${who.join('; ')})` : problems);
  }
  if (silent.length > 0) {
    return errors.reloadIncomplete(
      [tell(silent, 'did not answer in time'), tell(applied, 'applied it')].filter(Boolean).join('; '),
    );
  }
  const union = (pick: (i: Applied) => string[]) => [...new Set(applied.flatMap(pick))];
  const answer: ReloadAnswer = {
    object: 'sluice.config_reload',
    changed: union((i) => i.changed),
    restart_required: union((i) => i.restartRequired),
  };
  if (applied.some((i) => i.worker !== undefined)) {
    answer.workers = applied.map((i) => ({
      worker: i.worker ?? 0,
      pid: i.pid,
      changed: i.changed,
      restart_required: i.restartRequired,
    }));
  }
  return answer;
}

/** "workers 0, 2 refused it", "worker 1 applied it"; empty for none. */
function tell(instances: readonly InstanceReload[], what: string): string {
  if (instances.length === 0) return '';
  return `${instances.length > 1 ? 'workers' : 'worker'} ${instances.map((i) => i.worker ?? '?').join(', ')} ${what}`;
}

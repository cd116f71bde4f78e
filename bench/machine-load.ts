import { readFileSync } from 'node:fs';

/**
 * How busy the machine was with work other than the bench's own processes (Linux /proc), so a
 * noisy run can be told from a slow sluice: other builds and tests on a 2-core box skew both
 * latency and throughput.
 */
export interface LoadMark {
  /** Machine-wide busy time, clock ticks. */
  busy: number;
  /** The bench processes' own user+system time, clock ticks. */
  own: number;
  at: number;
}

function machineBusyTicks(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
  const [user, nice, system, , , irq, softirq, steal] = fields;
  return user + nice + system + irq + softirq + (steal ?? 0);
}

function processTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(after[11]) + Number(after[12]); // utime, stime (fields 14 and 15)
  } catch {
    return 0;
  }
}

/** A mark for the machine and the given processes; undefined where /proc is not there. */
export function markLoad(pids: number[]): LoadMark | undefined {
  try {
    return { busy: machineBusyTicks(), own: pids.reduce((sum, pid) => sum + processTicks(pid), 0), at: performance.now() };
  } catch {
    return undefined;
  }
}

/** Other processes' CPU between two marks, in cores (1.0 = one core fully busy). */
export function foreignCores(from: LoadMark, to: LoadMark, ticksPerSecond = 100): number {
  const seconds = (to.at - from.at) / 1000;
  if (seconds <= 0) return 0;
  return Math.max(0, to.busy - from.busy - (to.own - from.own)) / ticksPerSecond / seconds;
}

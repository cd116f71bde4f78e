/** What the bench knows of the gateway it starts as a user would: its build, and a process's memory. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('..', import.meta.url));

/** Whether dist/ is newer than every file in src/ but tests: bin/sluice.js's rule for running it. */
export function distIsCurrent(): boolean {
  const compiled = join(root, 'dist/cli/main.js');
  if (!existsSync(compiled)) return false;
  const built = statSync(compiled).mtimeMs;
  const older = (dir: string): boolean =>
    readdirSync(dir, { withFileTypes: true }).every((e) =>
      e.isDirectory() ? older(join(dir, e.name)) : e.name.endsWith('.test.ts') || statSync(join(dir, e.name)).mtimeMs <= built,
    );
  return older(join(root, 'src'));
}

/** A /proc/PID/status memory field (VmRSS: now; VmHWM: the peak), bytes. */
export function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(line?.split(/\s+/)[1] ?? 0) * 1024;
}

/** The gateway as a user starts it, for the bench: its build, its start, and a process's memory and CPU. */
import { type ChildProcess, spawn } from 'node:child_process';
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

/** A process's user + system CPU so far, seconds. */
export function procCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(after[11]) + Number(after[12])) / 100; // utime + stime, in clock ticks (USER_HZ 100)
}

/** `bin/sluice.js serve` on a config file; resolves with its port once it says it listens. */
export function startServe(
  configFile: string,
  nodeArgs: string[],
  core?: number,
): Promise<{ child: ChildProcess; port: number }> {
  // One process (the "held by one process"): without --workers, serve runs a worker per core
  // and this child would be their supervisor, which holds no stream.
  const argv = [process.execPath, ...nodeArgs, join(root, 'bin/sluice.js'), 'serve', '--config', configFile, '--workers', '1'];
  // taskset execs the command: the child's pid is the gateway's, whose /proc the bench reads.
  const [command, ...args] = core === undefined ? argv : ['taskset', '-c', String(core), ...argv];
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    // The config file alone decides (no ledger in Postgres, no Redis, no port from the environment).
    env: { ...process.env, SLUICE_CONFIG: '', PORT: '', HOST: '', DATABASE_URL: '', REDIS_URL: '', SLUICE_MASTER_KEY: '' },
  });
  // Never outlives the bench, as the other children do (children.ts).
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  child.once('exit', () => process.off('exit', kill));
  return new Promise((resolve, reject) => {
    let seen = '';
    let listening = false;
    const timer = setTimeout(() => fail(new Error('the gateway did not start within 60 s')), 60_000);
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    // Its log (a line per request) is read and dropped, so the pipes never fill; the end of it
    // says why, when it stops before it listens.
    let logTail = '';
    child.stderr?.on('data', (piece: Buffer) => (logTail = (logTail + piece.toString('utf8')).slice(-2000)));
    child.once('exit', (code) => fail(new Error(`the gateway exited before it listened (code ${code}): ${logTail}`)));
    child.stdout?.on('data', (piece: Buffer) => {
      if (listening) return;
      seen += piece.toString('utf8');
      const match = /sluice listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(seen);
      if (!match) return;
      listening = true;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({ child, port: Number(match[1]) });
    });
  });
}

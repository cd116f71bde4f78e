import { execFile, spawnSync } from 'node:child_process';

/**
 * Debian's podman as these machines need it (scripts/container/build-image.sh says why): the runc
 * runtime and explicit ulimits. The container test skips, saying why, without podman.
 */
export const podmanMissing =
  spawnSync('podman', ['--version'], { stdio: 'ignore' }).status === 0
    ? false
    : 'podman is not installed (apt-get install podman runc debootstrap): the container image test is skipped';

export const ULIMITS = ['--ulimit', 'nofile=16384:16384', '--ulimit', 'nproc=16384:16384'];

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** One podman command; resolves with its exit code and output, whatever the code. */
export function podman(args: string[], timeoutMs = 60_000): Promise<Ran> {
  return run('podman', ['--runtime', 'runc', ...args], timeoutMs);
}

export function run(command: string, args: string[], timeoutMs: number): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: unknown }).code ?? 1) : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
    });
  });
}

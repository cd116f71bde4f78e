import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

export interface Pinning {
  enabled: boolean;
  /** Cores this process could use before pinning itself. */
  cores: number;
  /** Why not, or which cores went to whom. */
  note: string;
  gatewayCore?: number;
  loadCore?: number;
}

/**
 * Gateway on core 0; fake upstream and load generator (this process) on core 1, so the gateway's
 * CPU is its own. Needs two cores and `taskset` (util-linux).
 */
export function decidePinning(wanted: boolean): Pinning {
  const cores = availableParallelism();
  if (!wanted) return { enabled: false, cores, note: 'off (--no-pin)' };
  if (cores < 2) return { enabled: false, cores, note: `off (${cores} core)` };
  if (spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status !== 0) return { enabled: false, cores, note: 'off (no taskset)' };
  const self = spawnSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  if (self.status !== 0) return { enabled: false, cores, note: 'off (taskset failed)' };
  return { enabled: true, cores, note: 'gateway on core 0; upstream + load generator on core 1', gatewayCore: 0, loadCore: 1 };
}

export interface BenchChild<Ready> {
  ready: Ready;
  /** The Node process itself (taskset execs it in place). */
  pid: number;
  /** Sends a message and resolves with the first reply of the same type and id. */
  ask<T>(message: { type: string; [key: string]: unknown }, timeoutMs?: number): Promise<T>;
  /** Closes the IPC channel (the children stop on that) and waits for the exit, killing after the timeout. */
  stop(timeoutMs?: number): Promise<void>;
}

const running = new Set<ChildProcess>();
let nextId = 1;

// Children never outlive the bench: killed on any exit of this process, error or not.
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

/** Starts `bench/<script>` on this Node with an IPC channel, optionally pinned to one core. */
export function startChild<Ready extends { type: 'ready' }>(
  script: string,
  options: { core?: number; env?: NodeJS.ProcessEnv; nodeArgs?: string[]; readyTimeoutMs?: number },
): Promise<BenchChild<Ready>> {
  const file = fileURLToPath(new URL(script, import.meta.url));
  const nodeArgv = [process.execPath, ...(options.nodeArgs ?? []), file];
  const [command, ...args] = options.core === undefined ? nodeArgv : ['taskset', '-c', String(options.core), ...nodeArgv];
  const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: options.env ?? process.env });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const ask = <T>(message: { type: string; [key: string]: unknown }, timeoutMs = 10_000): Promise<T> => {
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`${script}: no answer to ${message.type}`)), timeoutMs);
      const onMessage = (reply: { type: string; id?: number }) => {
        if (reply.type === message.type && reply.id === id) done(undefined, reply as T);
      };
      const onExit = () => done(new Error(`${script} exited`));
      function done(err: Error | undefined, value?: T) {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (err) reject(err);
        else resolve(value as T);
      }
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.send({ ...message, id });
    });
  };

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${script} did not start`)), options.readyTimeoutMs ?? 15_000);
    const onExit = (code: number | null) => fail(new Error(`${script} exited before it was ready (code ${code})`));
    function fail(err: Error) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    }
    child.once('exit', onExit);
    child.on('message', function onReady(msg: { type: string }) {
      if (msg.type !== 'ready') return;
      clearTimeout(timer);
      child.off('exit', onExit);
      child.off('message', onReady);
      resolve({
        ready: msg as Ready,
        pid: child.pid ?? 0,
        ask,
        async stop(timeoutMs = 5000) {
          if (child.exitCode !== null || child.signalCode !== null) return;
          if (child.connected) child.disconnect();
          const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
          await exited;
          clearTimeout(timer);
        },
      });
    });
  });
}

import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../config/schema.ts';
import { isGovernanceChangeMessage } from '../governance/keys/worker-change-channel.ts';
import { isWorkerMetricsMessage } from '../telemetry/worker-metrics.ts';
import { MetricsGatherer } from './gather-metrics.ts';
import { ReloadGatherer } from './gather-reloads.ts';
import { listeningLines, originOf } from './listening-lines.ts';
import { OperatorError } from './operator-error.ts';
import { claimPort } from './port-lock.ts';
import { RestartPolicy } from './restart-policy.ts';
import { isWorkerReloadMessage } from './worker-reload.ts';

/** What a worker tells the supervisor once its port is open. */
export interface WorkerListening {
  sluice: 'listening';
  address: string;
  family: string;
  port: number;
  /** The providers the worker serves (the same config gives every worker the same), for the supervisor to say. */
  providers: string[];
}

/** The environment a worker reads: its slot (stable across restarts) and the port to bind. */
export const WORKER_SLOT_ENV = 'SLUICE_WORKER_SLOT';
export const WORKER_PORT_ENV = 'SLUICE_WORKER_PORT';

/**
 * The tiers whose limits and budget reservations live in each process's memory (no Redis holds
 * them): N workers would each grant such a tier's whole limit, N times what the operator configured.
 */
function unsharedLimitTiers(config: Config): string[] {
  if (config.limits.redis_url) return [];
  return Object.entries(config.tiers)
    .filter(
      ([, t]) =>
        t.requests_per_minute !== undefined ||
        t.tokens_per_minute !== undefined ||
        t.concurrent_requests !== undefined ||
        t.project !== undefined ||
        t.budgets.length > 0,
    )
    .map(([name]) => name);
}

/** An explicit `--workers N` above 1 with such tiers is refused at start rather than silently loosened. */
export function refuseUnsharedLimits(config: Config, workers: number): void {
  const limited = workers < 2 ? [] : unsharedLimitTiers(config);
  if (limited.length === 0) return;
  throw new OperatorError(
    `--workers ${workers}: the limits and budgets of tier(s) ${limited.join(', ')} are kept in each process's memory, ` +
      'so every worker would grant them in full: set REDIS_URL (or limits.redis_url) to share them, or serve with --workers 1.',
  );
}

/**
 * A reload in a worker (docs/operations/reload.md): tiers whose limits only each worker's memory
 * would hold are refused, as they are at start, so that no reload multiplies a limit or a budget.
 */
export function unsharedLimitsProblems(config: Config): string[] {
  return unsharedLimitTiers(config).map(
    (name) =>
      `tiers.${name}: its limits and budgets would be kept in each worker's memory, so every worker would grant them in full: ` +
      'set limits.redis_url (or REDIS_URL) and restart, or serve with --workers 1.',
  );
}

/**
 * Without `--workers` (or SLUICE_WORKERS): a worker per core (issue 15), unless one process is
 * what keeps the config correct: tiers whose limits only memory holds, or an in-memory store
 * (each worker would have its own). Then one, and `why` says so.
 */
export function defaultWorkers(config: Config, cores: number): { workers: number; why?: string } {
  if (cores < 2) return { workers: 1 };
  const limited = unsharedLimitTiers(config);
  if (limited.length > 0) {
    return {
      workers: 1,
      why: `one process: the limits of tier(s) ${limited.join(', ')} are kept in memory (set REDIS_URL to serve on every core)`,
    };
  }
  if (!config.store.database_url && config.store.path === ':memory:') {
    return { workers: 1, why: 'one process: the store is in memory (store.path: ":memory:")' };
  }
  return { workers: cores };
}

/**
 * The primary of `sluice serve --workers N`: a thin supervisor that accepts no connection itself.
 * Each worker binds the port on its own socket with SO_REUSEPORT (the kernel spreads connections
 * across them), runs the whole gateway, and drains on its own on SIGTERM/SIGINT. The supervisor
 * loads no gateway code: it holds the port's lock, starts the workers and restarts one that dies
 * (restart-policy.ts).
 */
export async function superviseWorkers(config: Config, workers: number): Promise<void> {
  refuseUnsharedLimits(config, workers);
  // Locked until the supervisor exits: no second supervisor brings its workers onto this port (port-lock.ts).
  const { port } = await claimPort(config.server.host, config.server.port);

  const slots = new Map<Worker, number>();
  /** Workers that have opened the port; one still starting when a stop comes just ends. */
  const listening = new Set<Worker>();
  const restarts = new RestartPolicy(workers);
  let stopping: { signal: string; at: number } | undefined;
  let failed = false;
  let started = false;

  const fork = (slot: number): Promise<WorkerListening> => {
    const worker = cluster.fork({ [WORKER_SLOT_ENV]: String(slot), [WORKER_PORT_ENV]: String(port) });
    slots.set(worker, slot);
    return new Promise((resolve, reject) => {
      worker.on('message', (message: Partial<WorkerListening>) => {
        if (message?.sluice !== 'listening') return;
        listening.add(worker);
        console.log(`worker ${slot} (pid ${worker.process.pid}) listening`);
        resolve(message as WorkerListening);
      });
      worker.once('exit', (code, signal) => reject(new Error(`worker ${slot} exited (${signal ?? code}) before listening`)));
    });
  };

  const stopAll = (signal: NodeJS.Signals) => {
    for (const worker of slots.keys()) worker.process.kill(signal);
  };
  /** Stops every worker once (a repeated signal would make them stop without draining). */
  const giveUp = () => {
    failed = true;
    if (stopping) return;
    stopping = { signal: 'SIGTERM', at: Date.now() };
    stopAll('SIGTERM');
  };

  // GET /metrics on any worker answers for them all (telemetry/worker-metrics.ts), and a reload
  // reaches them all (worker-reload.ts).
  const gatherer = new MetricsGatherer();
  const reloads = new ReloadGatherer((worker) => slots.get(worker));
  cluster.on('message', (worker, message: unknown) => {
    // A key or endpoint changed on one worker: the others forget what they cached of it.
    if (isGovernanceChangeMessage(message)) {
      for (const other of listening) if (other !== worker && other.isConnected()) other.send(message);
    } else if (isWorkerMetricsMessage(message)) {
      if (message.sluice === 'metrics-ask') gatherer.ask(worker, message.id, listening);
      else if (message.sluice === 'metrics-collected') gatherer.collected(worker, message);
    } else if (isWorkerReloadMessage(message)) {
      if (message.sluice === 'reload-ask') reloads.ask(worker, message.id, listening);
      else if (message.sluice === 'reload-done') reloads.done(worker, message);
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const slot = slots.get(worker);
    slots.delete(worker);
    const served = listening.delete(worker);
    gatherer.left(worker);
    reloads.left(worker);
    if (slot === undefined) return;
    // A worker that cannot start (a busy port, a bad store path) would not start on a retry either.
    if (!started) giveUp();
    if (stopping) {
      if (code !== 0 && served) failed = true;
      if (slots.size === 0) process.exit(failed ? 1 : 0);
      return;
    }
    const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
    const decision = restarts.crashed(Date.now());
    if ('giveUp' in decision) {
      console.error(`worker ${slot} ${how}: ${decision.giveUp}, giving up`);
      giveUp();
      if (slots.size === 0) process.exit(1);
      return;
    }
    const delay = decision.restartInMs;
    console.error(`worker ${slot} ${how}; restarting it in ${delay} ms`);
    setTimeout(() => {
      if (stopping) return;
      fork(slot).catch((err: unknown) => {
        if (!stopping) console.error((err as Error).message);
      });
    }, delay);
  });

  const stop = (signal: NodeJS.Signals) => {
    if (stopping && signal === stopping.signal && Date.now() - stopping.at < 500) return;
    // A later signal reaches the workers too: each then stops at once (serve.ts), as one process would.
    if (!stopping) console.log(`${signal}: draining ${slots.size} workers for up to ${config.server.drain_timeout_s}s`);
    stopping = { signal, at: Date.now() };
    if (slots.size === 0) process.exit(failed ? 1 : 0);
    stopAll(signal);
  };
  // Installed before the port is announced, as in serve.ts: a signal must reach the drain.
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Each listening worker reads the config again; one still starting reads it as it starts.
  process.on('SIGHUP', () => {
    if (!stopping) void reloads.reloadAll(listening, 'SIGHUP');
  });

  // The first worker starts alone: it migrates the store before it listens (SQLite's migrator
  // takes no lock, so two workers migrating at once could collide), and a port 0 becomes a free
  // port, which the others (and any restart) then bind.
  let first: WorkerListening;
  try {
    first = await fork(0);
    await Promise.all(Array.from({ length: workers - 1 }, (_, i) => fork(i + 1)));
  } catch (err) {
    console.error(`sluice: ${(err as Error).message}; stopping`);
    return;
  }
  started = true;
  for (const line of listeningLines(originOf(first), `${workers} workers`, first.providers, config)) console.log(line);
}

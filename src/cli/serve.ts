import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/load-config.ts';
import type { Config } from '../config/schema.ts';
import type { Gateway } from '../server/app.ts';
import { explainListenError } from './explain-listen-error.ts';
import { watchHeapGrowth } from './heap-growth.ts';
import { keylessOpenHost } from './keyless-open-host.ts';
import { listeningLines, originOf } from './listening-lines.ts';
import { UnusableStoreError } from '../store/unusable-store-error.ts';
import { OperatorError } from './operator-error.ts';
import {
  defaultWorkers,
  superviseWorkers,
  unsharedLimitsProblems,
  WORKER_PORT_ENV,
  WORKER_SLOT_ENV,
  type WorkerListening,
} from './workers.ts';

export interface ServeOptions {
  port?: number;
  host?: string;
  config?: string;
  /**
   * Processes serving the port (`--workers`); more than 1: a supervisor and that many workers
   * (cli/workers.ts); undefined: a worker per core unless the config needs one process (defaultWorkers).
   */
  workers?: number;
}

export async function serve(options: ServeOptions): Promise<void> {
  // As a reload reads it again (SIGHUP, POST /admin/reload): the same file, environment and flags.
  const load = () => loadConfig({ file: options.config, env: process.env, overrides: options });
  const config = load();
  const { host } = config.server;
  if (keylessOpenHost(config)) {
    console.error(
      `Refusing to listen on ${host} without a key: set SLUICE_MASTER_KEY (or auth.master_key in the config), ` +
        'or bind to 127.0.0.1.',
    );
    process.exit(1);
  }
  let workers = options.workers;
  // Said with the listening line: why a machine with several cores got one process.
  let oneProcess: string | undefined;
  if (workers === undefined && cluster.isPrimary) {
    const chosen = defaultWorkers(config, availableParallelism());
    oneProcess = chosen.why;
    workers = chosen.workers;
  }
  if (cluster.isPrimary && workers !== undefined && workers > 1) return superviseWorkers(config, workers);
  const asWorker = cluster.isWorker ? await joinWorkers(config) : undefined;
  // Imported here: the supervisor of workers never loads the gateway (measured: its RSS 174 -> 98 MiB).
  const { createGateway } = await import('../server/app.ts');
  const gateway = createGateway(config, process.env, undefined, undefined, {
    reload: asWorker ? { load: () => asWorker(load()), refuse: unsharedLimitsProblems } : { load },
  });
  // The config read again (docs/operations/reload.md); the gateway logs what it did.
  process.on('SIGHUP', () => gateway.reload());
  if (asWorker) await shareAcrossWorkers(gateway);
  const address = await listenOrExplain(gateway, host, config.server.port, asWorker !== undefined);
  // Thousands of requests in flight: the heap grows in smaller steps (heap-growth.ts).
  watchHeapGrowth(() => gateway.context.scopes.size);
  let stopping: { signal: string; at: number } | undefined;
  const stop = (signal: string) => {
    if (stopping) {
      // Ctrl-C under `npm start` arrives twice within milliseconds: the terminal signals the whole
      // process group and npm forwards it to its child. Only a later signal means "stop now".
      if (signal === stopping.signal && Date.now() - stopping.at < 500) return;
      console.log(`${signal} again: stopping now, without draining`);
      process.exit(1);
    }
    stopping = { signal, at: Date.now() };
    console.log(`${signal}: draining open streams for up to ${config.server.drain_timeout_s}s`);
    gateway.shutdown().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(`shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      },
    );
  };
  // Installed before the port is announced: a supervisor that signals as soon as it reads the line
  // must reach the drain, not node's default action (exit at once, the ledger unflushed).
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  if (asWorker) {
    // The supervisor announces the port once every worker has it.
    const listening: WorkerListening = {
      sluice: 'listening',
      address: address.address,
      family: address.family,
      port: address.port,
      providers: gateway.context.registry.providers(),
    };
    process.send?.(listening);
    return;
  }
  for (const line of listeningLines(originOf(address), oneProcess, gateway.context.registry.providers(), config))
    console.log(line);
}

/**
 * A worker of `sluice serve --workers N` binds the port the supervisor gives it (the first
 * worker's, when the config says 0) and keeps its own ledger journal: a journal directory is one
 * process's (ledger-journal.ts locks it), and a slot's replacement replays what a crash left there.
 * Adjusts `config` so, and returns how to adjust each config a reload reads: a file that names
 * another port keeps it there, so that the reload reports server.port as needing a restart.
 */
async function joinWorkers(config: Config): Promise<(next: Config) => Config> {
  const slot = Number(process.env[WORKER_SLOT_ENV] ?? 0);
  const filePort = config.server.port;
  const port = Number(process.env[WORKER_PORT_ENV] ?? filePort);
  const { ledgerSettings } = await import('../store/open-ledger.ts');
  const adjust = (next: Config) => {
    if (next.server.port === filePort) next.server.port = port;
    const journal = ledgerSettings(next, () => {}, undefined).journal;
    if (journal) next.ledger.journal = join(journal.dir, `worker-${slot}`);
    return next;
  };
  adjust(config);
  return adjust;
}

/** A scrape of any worker answers for them all, and a reload reaches them all (docs/operations/scale-out.md). */
async function shareAcrossWorkers(gateway: Gateway): Promise<void> {
  const channel = {
    send: (message: unknown) => process.send?.(message),
    on: (event: 'message', listener: (message: unknown) => void) => process.on(event, listener),
  };
  const { shareReloadsAcrossWorkers } = await import('./worker-reload.ts');
  shareReloadsAcrossWorkers(gateway, channel);
  // A key revoked on one worker stops on the others within a second (docs/operations/scale-out.md).
  const { WorkerChangeChannel } = await import('../governance/keys/worker-change-channel.ts');
  const { governance } = gateway.context;
  governance.connect(new WorkerChangeChannel(channel, governance));
  if (!gateway.context.metrics) return;
  const { shareMetricsAcrossWorkers } = await import('../telemetry/worker-metrics.ts');
  shareMetricsAcrossWorkers(gateway.context.metrics, channel);
}

/** The port and store problems an operator fixes, as one line saying how; anything else keeps its stack. */
async function listenOrExplain(gateway: Gateway, host: string, port: number, reusePort: boolean): Promise<AddressInfo> {
  try {
    return await gateway.listen({ reusePort });
  } catch (err) {
    if (err instanceof UnusableStoreError) throw new OperatorError(err.message);
    throw explainListenError(err, host, port);
  }
}

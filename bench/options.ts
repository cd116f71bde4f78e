import { parseArgs } from 'node:util';

export type BenchMode = 'fast' | 'paced' | 'unary';

export interface BenchOptions {
  modes: BenchMode[];
  /** Fast mode: closed-loop streams in flight, one measured run of the mode per entry. */
  concurrency: number[];
  pacedConcurrency: number[];
  /** Unary mode: the concurrency sweep (its first entry should be 1: the boards' added latency). */
  unaryConcurrency: number[];
  paceMs: number;
  fastSeconds: number;
  pacedSeconds: number;
  unarySeconds: number;
  warmupSeconds: number;
  /** Measured direct+sluice pairs per mode (alternating). */
  rounds: number;
  json: boolean;
  pin: boolean;
  /** Directory for the gateway's CPU profiles (one per mode); summaries print after the table. */
  profileDir: string | undefined;
  /** A profiled phase per mode after the measured ones, read as CPU by stage (stage-costs.ts). */
  stages: boolean;
  /** The gateway's ledger (on by default, as in production); off for the on/off comparison. */
  ledger: boolean;
  /** The ledger's durable mode (`--durable-ledger`): its journal's cost, against a default run. */
  durableLedger: boolean;
  /** Gateway processes on the one port (`sluice serve --workers N`; gateway-workers.ts). */
  workers: number;
  /** Rows the ledger paging step seeds after the load phases (ledger-paging.ts); undefined: skipped. */
  ledgerPageRows: number | undefined;
  /** `--soak`: the slow-stream soak (soak.ts) instead of the modes. */
  soak: { streams: number; seconds: number; nodeArgs: string[] } | undefined;
}

export const USAGE = `npm run bench -- [options]
  --modes fast,paced,unary         which modes to run (default all; unary: non-streaming 256-byte completions)
  --duration S                     seconds per measured phase, every mode (default fast 4, paced 5, unary 3)
  --concurrency N[,N...]           fast mode: streams in flight, a run per entry (default 32)
  --paced-concurrency N[,N...]     paced mode: streams in flight, a run per entry (default 64,256)
  --unary-concurrency N[,N...]     unary mode: the concurrency sweep (default 1,16,64)
  --pace-ms MS                     paced mode: delay between chunks (default 20)
  --rounds N                       measured rounds per mode, sides alternating (default 2)
  --warmup S                       warm-up seconds per side per mode (default 3)
  --json                           print machine-readable results instead of the table
  --no-pin                         do not pin processes to cores
  --profile DIR                    CPU-profile the gateway's measured phases into DIR and summarize
  --no-stages                      skip the profiled phase per mode that prints the CPU by stage
  --no-ledger                      run the gateway with its ledger off (compare with a default run)
  --durable-ledger                 run the gateway with ledger.durable (its journal; compare with a default run)
  --workers N                      run the gateway as N worker processes on one port (default 1; unpins it)
  --ledger-page-rows N             rows the request-log paging step seeds after the load (default 1000000)
  --no-ledger-page                 skip that step (node bench/ledger-page.ts runs it alone)
  --soak                           instead of the modes: hold many slow streams through one gateway (docs/benchmarks/soak.md)
  --soak-streams N                 the soak's concurrent streams (default 10000)
  --soak-seconds S                 the soak's length, streams included (default 180)
  --soak-node-args=ARGS            Node options for the soak's gateway alone, e.g. --soak-node-args=--max-semi-space-size=8`;

function positive(name: string, value: string | undefined, fallback: number, integer = false): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) throw new Error(`--${name} must be a positive number`);
  return n;
}

/** A comma-separated list of positive integers, e.g. `64,256`. */
function positiveList(name: string, value: string | undefined, fallback: number[]): number[] {
  if (value === undefined) return fallback;
  return value.split(',').map((part) => positive(name, part.trim(), 0, true));
}

export function parseOptions(argv: string[]): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      modes: { type: 'string' },
      duration: { type: 'string' },
      concurrency: { type: 'string' },
      'paced-concurrency': { type: 'string' },
      'unary-concurrency': { type: 'string' },
      'pace-ms': { type: 'string' },
      rounds: { type: 'string' },
      warmup: { type: 'string' },
      json: { type: 'boolean' },
      'no-pin': { type: 'boolean' },
      profile: { type: 'string' },
      'no-stages': { type: 'boolean' },
      'no-ledger': { type: 'boolean' },
      'durable-ledger': { type: 'boolean' },
      workers: { type: 'string' },
      'ledger-page-rows': { type: 'string' },
      'no-ledger-page': { type: 'boolean' },
      soak: { type: 'boolean' },
      'soak-streams': { type: 'string' },
      'soak-seconds': { type: 'string' },
      'soak-node-args': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const modes = (values.modes ?? 'fast,paced,unary').split(',').map((m) => m.trim());
  for (const m of modes) {
    if (m !== 'fast' && m !== 'paced' && m !== 'unary') throw new Error(`unknown mode '${m}' (fast, paced, unary)`);
  }
  if (values['no-ledger'] && values['durable-ledger']) throw new Error('--durable-ledger needs the ledger: not with --no-ledger');
  const duration = values.duration === undefined ? undefined : positive('duration', values.duration, 0);
  return {
    modes: modes as BenchOptions['modes'],
    concurrency: positiveList('concurrency', values.concurrency, [32]),
    pacedConcurrency: positiveList('paced-concurrency', values['paced-concurrency'], [64, 256]),
    unaryConcurrency: positiveList('unary-concurrency', values['unary-concurrency'], [1, 16, 64]),
    paceMs: positive('pace-ms', values['pace-ms'], 20, true),
    fastSeconds: duration ?? 4,
    pacedSeconds: duration ?? 5,
    unarySeconds: duration ?? 3,
    warmupSeconds: positive('warmup', values.warmup, 3),
    rounds: positive('rounds', values.rounds, 2, true),
    json: values.json === true,
    pin: values['no-pin'] !== true,
    profileDir: values.profile,
    stages: values['no-stages'] !== true,
    ledger: values['no-ledger'] !== true,
    durableLedger: values['durable-ledger'] === true,
    workers: positive('workers', values.workers, 1, true),
    ledgerPageRows:
      values['no-ledger-page'] === true ? undefined : positive('ledger-page-rows', values['ledger-page-rows'], 1_000_000, true),
    soak:
      values.soak === true
        ? {
            streams: positive('soak-streams', values['soak-streams'], 10_000, true),
            seconds: positive('soak-seconds', values['soak-seconds'], 180),
            nodeArgs: (values['soak-node-args'] ?? '').split(' ').filter(Boolean),
          }
        : undefined,
  };
}

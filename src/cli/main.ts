import { ConfigError } from '../config/config-error.ts';
import { OperatorError, UsageError } from './operator-error.ts';
import { packageVersion } from './package-version.ts';
import { holdYoungGeneration } from './start-up-heap.ts';
import { integerFlag, parseFlags, workersFlag } from './parse-flags.ts';
import { usage } from './usage.ts';
import type { AdminCommand } from './keys.ts';

type Command = 'serve' | 'config' | 'pricing' | 'logs' | 'spend' | 'audit' | 'reconcile' | 'check' | AdminCommand;

const COMMANDS: readonly string[] = [
  'serve',
  'config',
  'pricing',
  'logs',
  'spend',
  'audit',
  'reconcile',
  'check',
  'projects',
  'keys',
  'endpoints',
];

/**
 * Each command's module is imported when it runs: `--help`, `--version` and `logs` then skip
 * loading the whole gateway (measured: `sluice --help` 1.3 -> 0.26 s of CPU).
 */
async function run(command: Command, args: string[]): Promise<void> {
  switch (command) {
    case 'serve':
      return runServe(args);
    case 'config':
      return runConfig(args);
    case 'pricing':
      return runPricing(args);
    case 'logs':
      return runLogs(args);
    case 'spend':
      return runSpend(args);
    case 'audit': {
      const { runAudit } = await import('./audit.ts');
      return runAudit(args, process.env);
    }
    case 'reconcile': {
      const { runReconcile } = await import('./reconcile.ts');
      return runReconcile(args, process.env);
    }
    case 'check':
      return runCheck(args);
    case 'projects':
    case 'keys':
    case 'endpoints': {
      const { runAdminCommand } = await import('./keys.ts');
      return runAdminCommand(command, args, process.env);
    }
  }
}

async function runServe(args: string[]): Promise<void> {
  const { values } = parseFlags('serve', args, {
    port: { type: 'string' },
    host: { type: 'string' },
    config: { type: 'string' },
    workers: { type: 'string' },
  });
  if (values.help) return console.log(usage.serve);
  const port = values.port === undefined ? undefined : integerFlag('serve', 'port', values.port, 0, 65535);
  const workers = workersFlag(values.workers ?? (process.env.SLUICE_WORKERS || undefined));
  const releaseYoungGeneration = holdYoungGeneration();
  const { serve } = await import('./serve.ts');
  await serve({ port, host: values.host, config: values.config, workers });
  return releaseYoungGeneration();
}

async function runConfig(args: string[]): Promise<void> {
  const { values, positionals } = parseFlags('config', args, {}, true);
  if (values.help) return console.log(usage.config);
  const [subcommand, ...files] = positionals;
  if (subcommand === undefined) throw new UsageError('sluice config: name a subcommand: check.');
  if (subcommand !== 'check') throw new UsageError(`sluice config: unknown subcommand "${subcommand}" (subcommands: check).`);
  if (files.length > 1) throw new UsageError('sluice config check: name one config file (or none: SLUICE_CONFIG).');
  const { configCheck } = await import('./config-check.ts');
  process.exitCode = await configCheck(files[0], process.env);
}

async function runPricing(args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(
    'pricing',
    args,
    {
      input: { type: 'string', default: '1000000' },
      output: { type: 'string', default: '1000000' },
      cached: { type: 'string', default: '0' },
      config: { type: 'string' },
    },
    true,
  );
  if (values.help) return console.log(usage.pricing);
  if (positionals.length !== 1) throw new UsageError('sluice pricing: name one model, e.g. sluice pricing openai/gpt-4o-mini.');
  const { pricing } = await import('./pricing.ts');
  const tokens = (name: 'input' | 'output' | 'cached') => integerFlag('pricing', name, values[name], 0, Number.MAX_SAFE_INTEGER);
  return pricing({
    model: positionals[0],
    config: values.config,
    input: tokens('input'),
    output: tokens('output'),
    cached: tokens('cached'),
  });
}

async function runLogs(args: string[]): Promise<void> {
  const { values } = parseFlags('logs', args, {
    follow: { type: 'boolean', short: 'f', default: false },
    url: { type: 'string' },
    limit: { type: 'string', default: '20' },
    model: { type: 'string' },
    provider: { type: 'string' },
    outcome: { type: 'string' },
  });
  if (values.help) return console.log(usage.logs);
  const port = process.env.PORT || '8080';
  const { logs } = await import('./logs.ts');
  return logs({
    url: values.url ?? (process.env.SLUICE_URL || `http://127.0.0.1:${port}`),
    key: process.env.SLUICE_MASTER_KEY || undefined,
    limit: integerFlag('logs', 'limit', values.limit, 1, 1000),
    follow: values.follow,
    filters: { model: values.model, provider: values.provider, outcome: values.outcome },
  });
}

async function runSpend(args: string[]): Promise<void> {
  const { values } = parseFlags('spend', args, {
    url: { type: 'string' },
    'group-by': { type: 'string' },
    period: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    csv: { type: 'boolean', default: false },
  });
  if (values.help) return console.log(usage.spend);
  const port = process.env.PORT || '8080';
  const { spend } = await import('./spend.ts');
  return spend({
    url: values.url ?? (process.env.SLUICE_URL || `http://127.0.0.1:${port}`),
    key: process.env.SLUICE_MASTER_KEY || undefined,
    groupBy: values['group-by'],
    period: values.period,
    from: values.from,
    to: values.to,
    csv: values.csv,
  });
}

async function runCheck(args: string[]): Promise<void> {
  const { values, positionals } = parseFlags(
    'check',
    args,
    {
      json: { type: 'boolean', default: false },
      kind: { type: 'string' },
      data: { type: 'string' },
      key: { type: 'string' },
    },
    true,
  );
  if (values.help) return console.log(usage.check);
  if (positionals.length !== 1) throw new UsageError('sluice check: name one stream: a file, a URL, or - for stdin.');
  const kinds = ['chat', 'responses', 'messages', 'media'] as const;
  const kind = kinds.find((one) => one === values.kind);
  if (values.kind !== undefined && kind === undefined) {
    throw new UsageError(`sluice check: --kind is chat, responses, messages or media, not "${values.kind}".`);
  }
  const { check } = await import('./check.ts');
  process.exitCode = await check({
    source: positionals[0],
    json: values.json,
    kind,
    data: values.data,
    key: values.key ?? (process.env.SLUICE_API_KEY || undefined),
  });
}

/** Dispatches the command line (a serving gateway then keeps the process alive). */
async function main(argv: string[]): Promise<void> {
  const [first, ...rest] = argv;
  if (first === '--version' || first === '-v' || first === 'version') return console.log(packageVersion());
  if (first === '--help' || first === '-h' || first === 'help') {
    const topic = rest[0];
    return console.log(topic && COMMANDS.includes(topic) ? usage[topic as Command] : usage.main);
  }
  // No command, or flags first (`sluice --port 9000`): serve.
  if (first === undefined || first.startsWith('-')) return run('serve', argv);
  if (!COMMANDS.includes(first)) throw new UsageError(`sluice: unknown command "${first}" (commands: ${COMMANDS.join(', ')}).`);
  return run(first as Command, rest);
}

try {
  await main(process.argv.slice(2));
} catch (err) {
  // An operator's mistake is one line saying what to do; anything else is a bug and keeps its stack.
  if (err instanceof UsageError) {
    console.error(`${err.message} See ${helpFor(err.message)}.`);
    process.exitCode = 2;
  } else if (err instanceof ConfigError || err instanceof OperatorError) {
    console.error(`sluice: ${err.message}`);
    process.exitCode = err instanceof OperatorError ? err.exitCode : 1;
  } else {
    throw err;
  }
  // The command failed and is over: what it opened on the way (a store, a Redis connection, a
  // worker's channel to its supervisor) must not keep the process alive. A worker of `serve
  // --workers` that could not start stayed up, and its supervisor waited for it, until a signal.
  process.exit();
}

/** `sluice serve --help` for an error about `sluice serve ...`, else the general help. */
function helpFor(message: string): string {
  const command = /^sluice (serve|config|pricing|logs|spend|audit|reconcile|check|projects|keys|endpoints)[: ]/.exec(
    message,
  )?.[1];
  return command ? `sluice ${command} --help` : 'sluice --help';
}

import { availableParallelism } from 'node:os';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closestMatch } from '../config/edit-distance.ts';
import { UsageError } from './operator-error.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * node:util parseArgs with `--help` / `-h` on every command and its errors turned into a
 * UsageError naming the command (and the nearest option for an unknown one).
 */
export function parseFlags<O extends Options>(command: string, args: string[], options: O, positionals = false) {
  const all = { ...options, help: { type: 'boolean', short: 'h' } } as const;
  try {
    return parseArgs({ args, options: all, allowPositionals: positionals, strict: true });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (!code?.startsWith('ERR_PARSE_ARGS_')) throw err;
    const unknown = /^Unknown option '(-{1,2}[^']*)'/.exec((err as Error).message)?.[1];
    if (unknown) {
      const near = closestMatch(unknown.replace(/^-+/, ''), Object.keys(all));
      throw new UsageError(`sluice ${command}: unknown option ${unknown}${near ? ` (did you mean --${near}?)` : ''}.`);
    }
    throw new UsageError(`sluice ${command}: ${(err as Error).message.split('\n')[0].replace(/\.$/, '')}.`);
  }
}

/** A whole number flag in [min, max]; `Number()` alone took "" as 0 and "8o8o" as NaN. */
export function integerFlag(command: string, name: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) {
    throw new UsageError(`sluice ${command}: --${name} must be a whole number from ${min} to ${max}, not "${value}".`);
  }
  return n;
}

/**
 * `--workers N|auto` (or SLUICE_WORKERS): absent, one process, so `npm start` and every embedding
 * behave as before; `auto` is one worker per core the process may use.
 */
/** `--workers`: undefined when not given (serve picks: a worker per core, cli/workers.ts defaultWorkers). */
export function workersFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (value === 'auto') return availableParallelism();
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 256) {
    throw new UsageError(`sluice serve: --workers must be auto or a whole number from 1 to 256, not "${value}".`);
  }
  return Number(value);
}

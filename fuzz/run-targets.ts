import fc from 'fast-check';

/**
 * The fixed seed every fuzz run starts from, so a failure reproduces: the same seed and count give
 * the same inputs. FUZZ_SEED overrides it (a failure report prints the seed and path to replay).
 */
export const DEFAULT_SEED = 20_260_501;

export function fuzzSeed(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.FUZZ_SEED;
  if (raw === undefined || raw === '') return DEFAULT_SEED;
  const seed = Number(raw);
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, not ${raw}`);
  return seed | 0;
}

/** One fuzz target: a property over generated inputs for one piece of code. */
export interface FuzzTarget {
  name: string;
  /** The file the target belongs to (sse framer, stream decoders, response decoders, surface encoders). */
  family: string;
  /** What it feeds and what must hold, one line (for docs/reliability/report.md). */
  what: string;
  check(parameters: fc.Parameters<unknown>): fc.RunDetails<unknown>;
}

export interface TargetSpec<T> {
  name: string;
  family: string;
  what: string;
  /** Built on first use, so that listing the targets loads no recording. */
  input(): fc.Arbitrary<T>;
  /** Throws on a violation: fast-check counts any throw, the code's own included, as a failure. */
  assert(input: T): void;
}

export function fuzzTarget<T>(spec: TargetSpec<T>): FuzzTarget {
  return {
    name: spec.name,
    family: spec.family,
    what: spec.what,
    check(parameters) {
      const property = fc.property(spec.input(), (input) => {
        spec.assert(input);
      });
      return fc.check(property, parameters as fc.Parameters<[T]>) as unknown as fc.RunDetails<unknown>;
    },
  };
}

export interface TargetResult {
  name: string;
  family: string;
  what: string;
  runs: number;
  seed: number;
  ms: number;
  ok: boolean;
  /** fast-check's report: the counterexample (shrunk), the error and its stack, the seed and path to replay. */
  failure?: string;
}

/** Runs one target; a failure is reported, not thrown, so every target runs. */
export function runTarget(target: FuzzTarget, runs: number, seed: number): TargetResult {
  const started = performance.now();
  const details = target.check({ numRuns: runs, seed });
  const result: TargetResult = {
    name: target.name,
    family: target.family,
    what: target.what,
    runs: details.numRuns,
    seed,
    ms: Math.round(performance.now() - started),
    ok: !details.failed,
  };
  if (details.failed) {
    const error = details.errorInstance;
    const stack = error instanceof Error ? (error.stack ?? error.message) : String(error);
    result.failure = compact(`${fc.defaultReportMessage(details) ?? 'failed'}\n${stack}`);
  }
  return result;
}

/** A counterexample can hold 20,000 nested brackets or a 70,000-character string: repeats are shown as counts. */
function compact(report: string): string {
  return report.replace(
    /(.{1,8}?)\1{20,}/gs,
    (run: string, unit: string) => `${unit.repeat(3)}…(${run.length / unit.length} × ${JSON.stringify(unit)})`,
  );
}

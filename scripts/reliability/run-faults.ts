import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { run } from 'node:test';
import { faultFiles } from './fault-cases.ts';

export interface TestOutcome {
  file: string;
  name: string;
  /** The describe blocks around it, outermost first. */
  suites: string[];
  status: 'pass' | 'fail' | 'skip';
  ms: number;
  error?: string;
}

/**
 * Runs the fault, ledger and bad-input test files with node's own runner (two at a time, as
 * `npm test` does) and records every test's outcome to `out`: what docs/reliability/report.md counts.
 */
export async function runFaults(out: string, observations: string): Promise<{ passed: number; failed: number }> {
  const outcomes: TestOutcome[] = [];
  // The figures the tests measure (test/helpers/observe.ts): each test file's process inherits it.
  mkdirSync(dirname(observations), { recursive: true });
  writeFileSync(observations, '');
  process.env.SLUICE_OBSERVATIONS = resolve(observations);
  const started = Date.now();
  const stream = run({ files: faultFiles, concurrency: 2, timeout: 180_000 });
  const suitesByFile = new Map<string, string[]>();
  stream.on('test:start', (data) => {
    const stack = suitesByFile.get(data.file ?? '') ?? [];
    stack.length = data.nesting;
    stack.push(data.name);
    suitesByFile.set(data.file ?? '', stack);
  });
  const record = (
    status: 'pass' | 'fail',
    data: {
      name: string;
      nesting: number;
      file?: string;
      skip?: unknown;
      details: { duration_ms: number; type?: string; error?: Error };
    },
  ) => {
    if (data.details.type === 'suite') return;
    const file = (data.file ?? '').replace(`${process.cwd()}/`, '');
    const suites = (suitesByFile.get(data.file ?? '') ?? []).slice(0, data.nesting);
    const cause = data.details.error?.cause;
    outcomes.push({
      file,
      name: data.name,
      suites,
      status: data.skip ? 'skip' : status,
      ms: Math.round(data.details.duration_ms),
      ...(status === 'fail'
        ? { error: String(cause instanceof Error ? cause.message : (cause ?? data.details.error?.message)).slice(0, 500) }
        : {}),
    });
  };
  stream.on('test:pass', (data) => record('pass', data));
  stream.on('test:fail', (data) => record('fail', data));
  stream.on('test:diagnostic', () => {});
  // Drain the reporter stream; the events above carry what is recorded.
  for await (const _ of stream);
  const passed = outcomes.filter((o) => o.status === 'pass').length;
  const failed = outcomes.filter((o) => o.status === 'fail').length;
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify({ kind: 'faults', finishedAt: new Date().toISOString(), seconds: Math.round((Date.now() - started) / 1000), files: faultFiles, outcomes }, null, 2)}\n`,
  );
  return { passed, failed };
}

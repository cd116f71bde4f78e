/**
 * `npm test`: every test file, in two tiers that run side by side, then the slowest files
 * (docs/contributing/testing.md "How npm test runs").
 *
 * - In-process: the unit and contract tests beside the code (src/, scripts/, bench/, fuzz/,
 *   test/helpers/) share a process per shard (`--experimental-test-isolation=none`). A process
 *   per file cost each file ~0.5 s of CPU to start Node and strip its imports' types, which is
 *   most of what those files cost; sharing one process does that once. Shards run at once because
 *   these files mostly wait (on PostgreSQL's migrations of a fresh schema, on timers), not compute:
 *   in one process the 224 files of src/ took 4 min of wall time for 31 s of CPU.
 * - A process per file: the end-to-end suites (test/), which start gateways, servers and whole
 *   processes, keep their isolation, `E2E_CONCURRENCY` at a time.
 *
 * The end-to-end tier's spec output is printed as it runs; each shard's goes to a file, printed
 * whole once every run has ended, so the lines of concurrent processes never interleave.
 *
 * Flags: `--typecheck` (npm test's) runs `npm run typecheck` beside the tests rather than before
 * them: one core's work for a minute or more, while the shards mostly wait. `--only unit|e2e`
 * runs one tier. Any other arguments are globs or files, which replace the defaults (their tier
 * chosen by their path).
 */
import { spawn } from 'node:child_process';
import { globSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { shardFiles } from './shard-files.ts';

const UNIT_GLOBS = [
  'src/**/*.test.ts',
  'scripts/**/*.test.ts',
  'bench/**/*.test.ts',
  'fuzz/**/*.test.ts',
  'test/helpers/**/*.test.ts',
];
const E2E_GLOBS = ['test/**/*.test.ts'];
/** In-process shards: enough to overlap the waits of the store's contract suites, few enough to start quickly. */
const UNIT_SHARDS = 4;
/** End-to-end files at once: one per core, as before this runner (their timing-sensitive tests hold on 2 cores). */
const E2E_CONCURRENCY = Math.max(2, cpus().length);
const SLOWEST = 15;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { only: { type: 'string' }, typecheck: { type: 'boolean', default: false } },
});
const isUnit = (file: string) => !file.startsWith('test/') || file.startsWith('test/helpers/');
const expand = (globs: string[]) => [...new Set(globs.flatMap((g) => globSync(g)))].sort();
const chosen = positionals.length > 0 ? expand(positionals) : undefined;
const unitFiles = values.only === 'e2e' ? [] : (chosen ?? expand(UNIT_GLOBS)).filter(isUnit);
const e2eFiles = values.only === 'unit' ? [] : (chosen ?? expand(E2E_GLOBS)).filter((f) => !isUnit(f));

const logs = mkdtempSync(join(tmpdir(), 'sluice-test-'));
const started = performance.now();

interface Run {
  name: string;
  files: string[];
  flags: string[];
  /** Its spec output as it runs, rather than at the end. */
  live?: boolean;
}

const runs: Run[] = [
  ...shardFiles(unitFiles, UNIT_SHARDS).map((files, i) => ({
    name: `unit shard ${i + 1}/${UNIT_SHARDS}`,
    files,
    flags: ['--experimental-test-isolation=none'],
  })),
  ...(e2eFiles.length > 0
    ? [{ name: 'end-to-end', files: e2eFiles, flags: [`--test-concurrency=${E2E_CONCURRENCY}`], live: true }]
    : []),
].filter((run) => run.files.length > 0);

console.log(
  `npm test: ${unitFiles.length} in-process files in ${Math.min(UNIT_SHARDS, unitFiles.length)} shards, ` +
    `${e2eFiles.length} end-to-end files ${E2E_CONCURRENCY} at a time`,
);
const typecheck = values.typecheck ? typeCheck() : undefined;
const results = await Promise.all(runs.map((run, i) => runOne(run, i)));
const typed = await typecheck;
for (const r of results) if (r.spec !== undefined) process.stdout.write(`\n===== ${r.name} =====\n${r.spec}`);
const timings = results.flatMap((r) => r.timings).sort((a, b) => b.ms - a.ms);
console.log(`\nslowest files (wall time; in-process files share their shard's process):`);
for (const { file, ms } of timings.slice(0, SLOWEST))
  console.log(`${(ms / 1000).toFixed(1).padStart(7)} s  ${relative('.', file)}`);
for (const r of results) console.log(`${r.code === 0 ? 'ok  ' : 'FAIL'} ${r.name}: ${(r.ms / 1000).toFixed(0)} s`);
if (typed)
  console.log(
    `${typed.code === 0 ? 'ok  ' : 'FAIL'} type check: ${(typed.ms / 1000).toFixed(0)} s${typed.code === 0 ? '' : `\n${typed.output}`}`,
  );
console.log(`all tests: ${((performance.now() - started) / 1000).toFixed(0)} s wall`);
rmSync(logs, { recursive: true, force: true });
process.exitCode = results.every((r) => r.code === 0) && (typed?.code ?? 0) === 0 ? 0 : 1;

/** `npm run typecheck` (the sources, then the console's), its output kept for a failure. */
async function typeCheck(): Promise<{ code: number; ms: number; output: string }> {
  const begun = performance.now();
  const child = spawn('npm', ['run', '--silent', 'typecheck'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number>((resolve) => child.once('close', (c) => resolve(c ?? 1)));
  return { code, ms: performance.now() - begun, output };
}

async function runOne(run: Run, index: number) {
  const spec = run.live ? 'stdout' : join(logs, `${index}.spec.txt`);
  const times = join(logs, `${index}.times.jsonl`);
  const args = [
    '--test',
    '--test-timeout=120000',
    '--test-reporter=spec',
    `--test-reporter-destination=${spec}`,
    `--test-reporter=${join(import.meta.dirname, 'slowest-reporter.ts')}`,
    `--test-reporter-destination=${times}`,
    ...run.flags,
    ...run.files,
  ];
  const runStarted = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  const code = await new Promise<number>((resolve) => child.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
  const ms = performance.now() - runStarted;
  console.log(`${run.name}: ${run.files.length} files, ${(ms / 1000).toFixed(0)} s, exit ${code}`);
  const timings = readOptional(times)
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { file: string; ms: number });
  return { name: run.name, code, ms, timings, spec: run.live ? undefined : readOptional(spec) };
}

function readOptional(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/**
 * `npm test`: every test file, in shared processes that run side by side, then the slowest files
 * (docs/contributing/testing.md "How npm test runs").
 *
 * - Shards: files share a process per shard (`--experimental-test-isolation=none`), in turn. A
 *   process per file cost each file ~0.7 s of CPU to start Node and strip its imports' types,
 *   which was most of what a unit file cost and 70 of the 276 s of CPU of the end-to-end files;
 *   sharing one process does that once. The unit and contract tests beside the code (src/,
 *   scripts/, bench/, fuzz/, test/helpers/) and the end-to-end suites (test/) are split together
 *   into SHARDS, more than the cores because most files mostly wait (on the gateways, fake
 *   upstreams and processes they start, on PostgreSQL): the end-to-end files' wall times sum to
 *   880 s for 276 s of CPU, so two at a time (a process each, before) left the cores idle half the
 *   run. Split apart (2 unit shards, 4 end-to-end), the unit shards ended 20-30 s before the rest.
 * - A process per file: the few end-to-end files in ISOLATED, two at a time.
 *
 * Every process (and what it spawns) shares a V8 compile cache (NODE_COMPILE_CACHE), so a
 * spawned `sluice` or gateway process compiles sluice's modules once per machine, not per start.
 *
 * Each run's spec output goes to a file, printed whole when the run ends, so the lines of
 * concurrent processes never interleave.
 *
 * Flags: `--typecheck` (npm test's) runs `npm run typecheck` beside the tests rather than before
 * them. `--only unit|e2e` runs one tier. `--record` writes each file's wall time into
 * file-seconds.json, which weighs the shards (run it whole, on a quiet machine, when files were
 * added or grew). Any other arguments are globs or files, which replace the
 * defaults (their tier chosen by their path).
 */
import { spawn } from 'node:child_process';
import { globSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
/**
 * Shards. With PostgreSQL's CPU counted, npm test nearly fills both cores, and timing-sensitive
 * files fail when more processes share them: 4 unit and 6 end-to-end shards ran 162-212 s but
 * failed in CI twice in three runs (a record settling past its 2 s wait, Redis's return past its
 * bound, a limit's window); 2 and 4 ran 207 s, green.
 */
const SHARDS = 6;
/** End-to-end files that keep a process of their own, and why. */
const ISOLATED = [
  // The bench itself: its processes fill both cores for most of a minute, under a limit of its own.
  'test/e2e/bench-smoke.test.ts',
  // Builds and runs the container image: minutes of podman the first time on a machine.
  'test/container/image.test.ts',
  // Asserts the price registry was never loaded in its process: a fact about the whole process.
  'test/e2e/price-registry-load.test.ts',
];
/** Isolated files at once. */
const ISOLATED_CONCURRENCY = 2;
const SLOWEST = 15;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    only: { type: 'string' },
    typecheck: { type: 'boolean', default: false },
    record: { type: 'boolean', default: false },
  },
});
const isUnit = (file: string) => !file.startsWith('test/') || file.startsWith('test/helpers/');
const expand = (globs: string[]) => [...new Set(globs.flatMap((g) => globSync(g)))].sort();
const chosen = positionals.length > 0 ? expand(positionals) : undefined;
const unitFiles = values.only === 'e2e' ? [] : (chosen ?? expand(UNIT_GLOBS)).filter(isUnit);
const e2eFiles = values.only === 'unit' ? [] : (chosen ?? expand(E2E_GLOBS)).filter((f) => !isUnit(f));
const isolated = e2eFiles.filter((f) => ISOLATED.includes(f)).sort((a, b) => ISOLATED.indexOf(a) - ISOLATED.indexOf(b));
const shared = e2eFiles.filter((f) => !ISOLATED.includes(f));
/** Each file's wall time in the last recorded run, the shards' weights (shard-files.ts). */
const TIMES = join(import.meta.dirname, 'file-seconds.json');
const recorded = JSON.parse(readFileSync(TIMES, 'utf8')) as Record<string, number>;
process.env.NODE_COMPILE_CACHE ??= join(import.meta.dirname, '..', '..', 'node_modules', '.cache', 'sluice-compile');

const logs = mkdtempSync(join(tmpdir(), 'sluice-test-'));
const started = performance.now();

interface Run {
  name: string;
  files: string[];
  flags: string[];
}

const SHARED = ['--experimental-test-isolation=none'];
const runs: Run[] = [
  ...shardFiles([...unitFiles, ...shared], SHARDS, recorded).map((files, i, all) => ({
    name: `shard ${i + 1}/${all.length}`,
    files,
    flags: SHARED,
  })),
  { name: 'end-to-end, a process each', files: isolated, flags: [`--test-concurrency=${ISOLATED_CONCURRENCY}`] },
].filter((run) => run.files.length > 0);

console.log(
  `npm test: ${unitFiles.length} unit and ${shared.length} end-to-end files in ` +
    `${Math.min(SHARDS, unitFiles.length + shared.length)} shards, ${isolated.length} in a process each`,
);
const typecheck = values.typecheck ? typeCheck() : undefined;
const results = await Promise.all(runs.map((run, i) => runOne(run, i)));
const typed = await typecheck;
const timings = results.flatMap((r) => r.timings).sort((a, b) => b.ms - a.ms);
console.log(`\nslowest files (wall time; the files of a shard run in turn in its process):`);
for (const { file, ms } of timings.slice(0, SLOWEST))
  console.log(`${(ms / 1000).toFixed(1).padStart(7)} s  ${relative('.', file)}`);
if (values.record) {
  const times = { ...recorded };
  for (const { file, ms } of timings) times[relative('.', file)] = Math.round(ms / 100) / 10;
  const sorted = Object.fromEntries(Object.entries(times).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(TIMES, `${JSON.stringify(sorted, null, 2)}\n`);
  console.log(`recorded ${timings.length} files' wall times in ${relative('.', TIMES)}`);
}
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
  const spec = join(logs, `${index}.spec.txt`);
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
  process.stdout.write(`\n===== ${run.name} =====\n${readOptional(spec)}`);
  console.log(`${run.name}: ${run.files.length} files, ${(ms / 1000).toFixed(0)} s, exit ${code}`);
  const timings = readOptional(times)
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { file: string; ms: number });
  return { name: run.name, code, ms, timings };
}

function readOptional(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fuzzSeed, runTarget, type TargetResult } from './run-targets.ts';
import { fuzzTargets } from './targets.ts';

/**
 * `npm run fuzz [-- --runs N] [--target NAME] [--out FILE]`: every target at full size (100,000
 * generated inputs each) from the printed seed (FUZZ_SEED overrides it). Writes the results as JSON
 * (for docs/reliability/report.md) and exits 1 when a property failed, with fast-check's report: the shrunk
 * counterexample, the error with its stack, and the seed and path that replay it.
 */
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: process.env.FUZZ_RUNS ?? '100000' },
    target: { type: 'string', multiple: true },
    out: { type: 'string', default: '.reliability/fuzz.json' },
  },
});
const runs = Number(values.runs);
if (!Number.isSafeInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, not ${values.runs}`);
const seed = fuzzSeed();
const targets = values.target ? fuzzTargets.filter((t) => values.target?.includes(t.name)) : fuzzTargets;
if (targets.length === 0)
  throw new Error(`no target named ${values.target?.join(', ')}; targets: ${fuzzTargets.map((t) => t.name).join(', ')}`);

console.log(`fuzz: seed ${seed} (FUZZ_SEED=${seed} reproduces), ${runs} inputs per target, ${targets.length} targets`);
const results: TargetResult[] = [];
for (const target of targets) {
  const result = runTarget(target, runs, seed);
  results.push(result);
  console.log(
    `${result.ok ? 'ok  ' : 'FAIL'} ${target.name.padEnd(28)} ${String(result.runs).padStart(7)} inputs  ${(result.ms / 1000).toFixed(1)} s`,
  );
  if (result.failure) console.log(result.failure);
}
mkdirSync(new URL('.', new URL(values.out, `file://${process.cwd()}/`)), { recursive: true });
writeFileSync(
  values.out,
  `${JSON.stringify({ kind: 'fuzz', finishedAt: new Date().toISOString(), seed, runsPerTarget: runs, results }, null, 2)}\n`,
);
const failed = results.filter((r) => !r.ok).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;

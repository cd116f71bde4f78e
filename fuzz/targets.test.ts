import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fuzzSeed, runTarget } from './run-targets.ts';
import { fuzzTargets } from './targets.ts';

/**
 * The fuzz targets of `npm run fuzz`, each with a few hundred inputs from the same fixed seed, so
 * that CI exercises every property in seconds; `npm run fuzz` runs them at 100,000 each.
 */
const RUNS = Number(process.env.FUZZ_TEST_RUNS ?? 300);
const seed = fuzzSeed();

describe(`fuzz targets (${RUNS} inputs each, seed ${seed})`, () => {
  for (const target of fuzzTargets) {
    it(`${target.name}: ${target.what}`, () => {
      const result = runTarget(target, RUNS, seed);
      assert.ok(result.ok, result.failure);
      assert.equal(result.runs, RUNS);
    });
  }
});

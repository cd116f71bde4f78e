import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runSoak } from './run-soak.ts';

/** The soak of `npm run soak` (5 minutes) cut to ~20 s for CI: the same traffic, seed and checks. */
const SECONDS = Number(process.env.SOAK_TEST_SECONDS ?? 15);

describe('soak (short)', () => {
  it(
    `${SECONDS} s of mixed streams with client disconnects and upstream faults: one ledger row per request, no scope left, memory and handles back to the warm baseline`,
    { timeout: 120_000 },
    async () => {
      const result = await runSoak({ seconds: SECONDS, seed: 1, concurrency: 8 });
      assert.deepEqual(result.failures, []);
      assert.ok(result.requests > 50, `${result.requests} requests`);
      assert.equal(result.ledgerRows, result.requests);
      for (const kind of Object.keys(result.byKind)) assert.ok(result.byKind[kind] > 0);
    },
  );
});

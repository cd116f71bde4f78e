import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { describe, it } from 'node:test';
import { UsageError } from './operator-error.ts';
import { workersFlag } from './parse-flags.ts';

describe('--workers', () => {
  it('is one process when not given, so npm start and embedders keep one', () => {
    assert.equal(workersFlag(undefined), 1);
  });

  it('takes a count, or auto for one per core', () => {
    assert.equal(workersFlag('3'), 3);
    assert.equal(workersFlag('auto'), availableParallelism());
  });

  it('refuses anything else, naming the flag and what it takes', () => {
    for (const bad of ['0', '', '2.5', 'all', '-1', '257']) {
      assert.throws(
        () => workersFlag(bad),
        (err: unknown) => err instanceof UsageError && /--workers must be auto or a whole number from 1 to 256/.test(err.message),
        bad,
      );
    }
  });
});

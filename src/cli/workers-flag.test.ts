import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { describe, it } from 'node:test';
import { UsageError } from './operator-error.ts';
import { workersFlag } from './parse-flags.ts';
import { configSchema } from '../config/schema.ts';
import { defaultWorkers, unsharedLimitsProblems } from './workers.ts';

describe('--workers', () => {
  it('is left to serve when not given (a worker per core unless the config needs one process)', () => {
    assert.equal(workersFlag(undefined), undefined);
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

describe('the default number of workers', () => {
  const config = (extra: object = {}) => configSchema.parse({ ...extra });
  it('is one per core', () => {
    assert.deepEqual(defaultWorkers(config(), 4), { workers: 4 });
  });

  it('is one on a single core', () => {
    assert.deepEqual(defaultWorkers(config(), 1), { workers: 1 });
  });

  it('is one, saying why, when a tier keeps its limits in memory or the store is in memory', () => {
    const limited = defaultWorkers(config({ tiers: { free: { requests_per_minute: 10 } } }), 2);
    assert.equal(limited.workers, 1);
    assert.match(limited.why ?? '', /tier\(s\) free are kept in memory \(set REDIS_URL/);
    assert.deepEqual(defaultWorkers(config({ tiers: { free: { requests_per_minute: 10 } }, limits: { redis_url: 'redis://x' } }), 2), {
      workers: 2,
    });
    assert.equal(defaultWorkers(config({ store: { path: ':memory:' } }), 2).workers, 1);
  });
});

describe('a reload in a worker', () => {
  const config = (extra: object = {}) => configSchema.parse({ ...extra });
  it('refuses tiers whose limits or budgets only each worker would hold, naming each tier and the fix', () => {
    const tiers = { free: { requests_per_minute: 10 }, paid: { budgets: [{ period: 'day', limit_usd: 5 }] }, open: { deadline_s: 30 } };
    const problems = unsharedLimitsProblems(config({ tiers }));
    assert.deepEqual(
      problems.map((p) => p.slice(0, p.indexOf(':'))),
      ['tiers.free', 'tiers.paid'],
    );
    assert.match(
      problems[0],
      /every worker would grant them in full: set limits\.redis_url \(or REDIS_URL\) and restart, or serve with --workers 1\.$/,
    );
    assert.deepEqual(unsharedLimitsProblems(config({ tiers, limits: { redis_url: 'redis://x' } })), []);
  });
});

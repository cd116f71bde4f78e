import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createReadiness, NotReady, type ReadinessCheck } from './readiness.ts';

const ok = (detail: Record<string, unknown> = {}): ReadinessCheck => ({ required: true, probe: async () => detail });
const down = (required: boolean, err: Error = new NotReady('unreachable')): ReadinessCheck => ({
  required,
  probe: () => Promise.reject(err),
});
const never = (): ReadinessCheck => ({ required: true, probe: () => new Promise(() => {}) });

describe('createReadiness', () => {
  it('is ready when every check answers, naming each check, its state and its details', async () => {
    const report = await createReadiness({ store: ok({ engine: 'sqlite' }), redis: { required: false, probe: undefined } })();
    assert.deepEqual(report, { ready: true, checks: { store: { state: 'ok', engine: 'sqlite' }, redis: { state: 'off' } } });
  });

  it('is not ready when a required check is down, and says why', async () => {
    const report = await createReadiness({ store: down(true), providers: ok() })();
    assert.equal(report.ready, false);
    assert.deepEqual(report.checks.store, { state: 'down', required: true, reason: 'unreachable' });
    assert.deepEqual(report.checks.providers, { state: 'ok' });
  });

  it('stays ready when only a check that is not required is down, and reports it', async () => {
    const report = await createReadiness({ redis: down(false), store: ok() })();
    assert.equal(report.ready, true);
    assert.deepEqual(report.checks.redis, { state: 'down', required: false, reason: 'unreachable' });
  });

  it('answers within the timeout when a check hangs, as a stalled database would', async () => {
    const started = performance.now();
    const report = await createReadiness({ store: never(), providers: ok() }, 50)();
    assert.ok(performance.now() - started < 1_000, 'bounded by the check timeout');
    assert.deepEqual(report.checks.store, { state: 'down', required: true, reason: 'no answer within 50 ms' });
    assert.equal(report.ready, false);
  });

  it('reports an unexpected error as failed, without its message (the endpoint is open)', async () => {
    const report = await createReadiness({ store: down(true, new Error('connect ECONNREFUSED 10.1.2.3:5432')) })();
    assert.deepEqual(report.checks.store, { state: 'down', required: true, reason: 'failed' });
  });

  it('joins a check still running from an earlier probe instead of starting another', async () => {
    let started = 0;
    let answer: () => void = () => {};
    const slow: ReadinessCheck = {
      required: true,
      probe: () => {
        started++;
        return new Promise<void>((resolve) => (answer = resolve));
      },
    };
    const readiness = createReadiness({ store: slow }, 20);
    assert.equal((await readiness()).ready, false);
    assert.equal((await readiness()).ready, false);
    assert.equal(started, 1, 'the stalled probe is not started again');
    const third = readiness();
    answer();
    assert.equal((await third).ready, true);
    await readiness();
    assert.equal(started, 2, 'a new probe once the earlier one ended');
  });
});

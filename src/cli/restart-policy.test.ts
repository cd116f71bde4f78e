import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RestartPolicy } from './restart-policy.ts';

describe('restarting crashed workers', () => {
  it('waits 250 ms after a first crash, doubling with each crash within a minute', () => {
    const policy = new RestartPolicy(2);
    assert.deepEqual(
      [0, 1_000, 2_000, 3_000].map((at) => policy.crashed(at)),
      [{ restartInMs: 250 }, { restartInMs: 500 }, { restartInMs: 1_000 }, { restartInMs: 2_000 }],
    );
  });

  it('forgets crashes older than a minute: a worker that crashes once an hour restarts at once', () => {
    const policy = new RestartPolicy(2);
    for (let hour = 0; hour < 10; hour++) assert.deepEqual(policy.crashed(hour * 3_600_000), { restartInMs: 250 });
  });

  it('gives up past max(5, 2 x workers) crashes within a minute', () => {
    const two = new RestartPolicy(2);
    for (let i = 0; i < 5; i++) assert.ok('restartInMs' in two.crashed(i * 100));
    assert.deepEqual(two.crashed(500), { giveUp: '6 crashes within 60s' });

    const eight = new RestartPolicy(8);
    const decisions = Array.from({ length: 17 }, (_, i) => eight.crashed(i * 100));
    assert.equal(decisions.filter((d) => 'giveUp' in d).length, 1);
    assert.deepEqual(decisions[15], { restartInMs: 30_000 });
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HealthBook } from './health.ts';

function book() {
  let now = 1_000_000;
  const health = new HealthBook({ breakerFailures: 2, breakerOpenMs: 10_000, ewmaAlpha: 0.5, now: () => now });
  return { health, advance: (ms: number) => (now += ms) };
}

describe('HealthBook', () => {
  it('opens the breaker after the configured consecutive failures, not before', () => {
    const { health } = book();
    health.failed('a/m', 'upstream_overloaded');
    assert.equal(health.breaker('a/m'), 'closed');
    assert.equal(health.available('a/m'), true);
    health.failed('a/m', 'upstream_overloaded');
    assert.equal(health.breaker('a/m'), 'open');
    assert.equal(health.available('a/m'), false);
  });

  it('a success in between resets the count', () => {
    const { health } = book();
    health.failed('a/m', 'upstream_error');
    health.succeeded('a/m', 100);
    health.failed('a/m', 'upstream_error');
    assert.equal(health.breaker('a/m'), 'closed');
  });

  it('lets one probe through once the open time passed; closes on its success', () => {
    const { health, advance } = book();
    health.failed('a/m', 'x');
    health.failed('a/m', 'x');
    advance(10_000);
    assert.equal(health.breaker('a/m'), 'half-open');
    assert.equal(health.available('a/m'), true);
    health.begin('a/m');
    assert.equal(health.available('a/m'), false, 'one probe at a time');
    health.succeeded('a/m', 50);
    assert.equal(health.breaker('a/m'), 'closed');
    assert.equal(health.available('a/m'), true);
  });

  it('a failed probe opens the breaker for another whole open time', () => {
    const { health, advance } = book();
    health.failed('a/m', 'x');
    health.failed('a/m', 'x');
    advance(10_000);
    health.begin('a/m');
    health.failed('a/m', 'x');
    assert.equal(health.breaker('a/m'), 'open');
    advance(9_999);
    assert.equal(health.available('a/m'), false);
    advance(1);
    assert.equal(health.available('a/m'), true);
  });

  it('a probe that never reports is forgotten after the open time', () => {
    const { health, advance } = book();
    health.failed('a/m', 'x');
    health.failed('a/m', 'x');
    advance(10_000);
    health.begin('a/m');
    advance(10_000);
    assert.equal(health.available('a/m'), true);
  });

  it('a cooldown skips the target until it ends, whatever the breaker says', () => {
    const { health, advance } = book();
    health.coolDown('a/m', 3_000);
    assert.equal(health.available('a/m'), false);
    assert.equal(health.breaker('a/m'), 'closed');
    advance(3_000);
    assert.equal(health.available('a/m'), true);
  });

  it('scores TTFT as an exponentially weighted average; unmeasured targets score 0', () => {
    const { health } = book();
    assert.equal(health.score('a/m'), 0);
    health.succeeded('a/m', 100);
    assert.equal(health.score('a/m'), 100);
    health.succeeded('a/m', 300);
    assert.equal(health.score('a/m'), 200);
  });

  it('tracks a bounded number of targets: names a client makes up cannot grow it without end', () => {
    const { health } = book();
    for (let i = 0; i < 5000; i++) health.succeeded(`up/model-${i}`, 10);
    const view = health.view();
    assert.equal(view.length, 1024);
    assert.equal(view.at(-1)?.target, 'up/model-4999');
  });

  it('shows known and tried targets, with the last failures', () => {
    const { health } = book();
    health.failed('a/m', 'rate_limit_exceeded');
    health.coolDown('a/m', 5_000);
    const view = health.view(['b/n']);
    assert.deepEqual(
      view.map((v) => [v.target, v.breaker, v.consecutive_failures, v.recent_failures.map((f) => f.code), v.cooldown_until !== null]),
      [
        ['a/m', 'closed', 1, ['rate_limit_exceeded'], true],
        ['b/n', 'closed', 0, [], false],
      ],
    );
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { KeyPool } from './key-pool.ts';

function upstreamError(status: number, headers: Record<string, string> = {}): GatewayError {
  return new GatewayError({ code: 'upstream_error', status: 502, type: 'upstream_error', message: 'no', upstreamStatus: status, headers });
}

function poolOf(now: { t: number }, lines: string[] = []) {
  return new KeyPool(
    'openai',
    [
      { label: 'a', weight: 1, rpm: 2 },
      { label: 'b', weight: 1 },
    ],
    (line) => lines.push(line),
    () => now.t,
  );
}

describe('KeyPool', () => {
  it("counts each take against the key's own requests a minute", () => {
    const now = { t: 0 };
    const pool = poolOf(now);
    const none = new Set<string>();
    const onlyA = new Set(['b']);
    assert.equal(pool.take(undefined, onlyA).key?.label, 'a');
    assert.equal(pool.take(undefined, onlyA).key?.label, 'a');
    assert.equal(pool.take(undefined, onlyA).key, null);
    assert.deepEqual(pool.view()[0], { label: 'a', state: 'limited', usableInMs: 60_000 });
    now.t = 60_000;
    assert.equal(pool.take(undefined, onlyA).key?.label, 'a');
    assert.ok(pool.take(undefined, none).key);
  });

  it('cools a key down for its Retry-After, and takes it out on a 401 with one log line', () => {
    const now = { t: 0 };
    const lines: string[] = [];
    const pool = poolOf(now, lines);
    assert.equal(pool.refused('a', upstreamError(429, { 'retry-after': '3' })), true);
    assert.deepEqual(pool.view()[0], { label: 'a', state: 'cooling', usableInMs: 3000 });
    assert.equal(pool.refused('b', upstreamError(401)), true);
    assert.equal(pool.refused('b', upstreamError(401)), true);
    assert.equal(lines.length, 1);
    assert.match(lines[0], /key 'b' taken out/);
    assert.equal(pool.view()[1].state, 'removed');
    // Neither key now: the soonest is free in 3 s.
    const choice = pool.take(undefined, new Set());
    assert.equal(choice.key, null);
    if (choice.key === null) assert.equal(pool.unavailable(choice).headers['retry-after'], '3');
    now.t = 3000;
    assert.equal(pool.take(undefined, new Set()).key?.label, 'a');
  });

  it('leaves any other failure to routing', () => {
    const pool = poolOf({ t: 0 });
    assert.equal(pool.refused('a', upstreamError(500)), false);
    assert.equal(pool.view()[0].state, 'available');
  });

  it('sets a key aside until the reset when the upstream says nothing is left', () => {
    const now = { t: 0 };
    const pool = poolOf(now);
    pool.learn('b', { 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '2s' });
    assert.deepEqual(pool.view()[1], { label: 'b', state: 'limited', usableInMs: 2000 });
  });
});

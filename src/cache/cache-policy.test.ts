import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configSchema } from '../config/schema.ts';
import { cacheModeOf, cachePolicyOf } from './cache-policy.ts';

const config = configSchema.parse({
  routes: { fast: { targets: [{ model: 'up/a' }], cache: { ttl_s: 60 } }, plain: { targets: [{ model: 'up/b' }] } },
  tiers: { gold: { cache: { ttl_s: 5, max_bytes: 100 } }, free: {} },
  default_tier: 'gold',
});

describe('cachePolicyOf', () => {
  it("takes the route's cache over the tier's", () => {
    assert.deepEqual(cachePolicyOf(config, 'free', 'fast'), { ttlMs: 60_000, maxBytes: 1_048_576 });
  });

  it("takes the caller's tier, else the default tier", () => {
    assert.equal(cachePolicyOf(config, 'free', 'plain'), undefined);
    assert.deepEqual(cachePolicyOf(config, null, 'plain'), { ttlMs: 5000, maxBytes: 100 });
  });

  it("takes an endpoint's cache over the tier's, the route's over both", () => {
    const endpoint = { ttl_s: 30, max_bytes: 2048 };
    assert.deepEqual(cachePolicyOf(config, 'free', 'plain', endpoint), { ttlMs: 30_000, maxBytes: 2048 });
    assert.deepEqual(cachePolicyOf(config, 'gold', 'plain', endpoint), { ttlMs: 30_000, maxBytes: 2048 });
    assert.deepEqual(cachePolicyOf(config, 'free', 'fast', endpoint), { ttlMs: 60_000, maxBytes: 1_048_576 });
  });

  it("an endpoint without a cache keeps the route's or tier's", () => {
    assert.deepEqual(cachePolicyOf(config, 'gold', 'plain', null), { ttlMs: 5000, maxBytes: 100 });
    assert.equal(cachePolicyOf(config, 'free', 'plain', null), undefined);
  });

  it('is off where nothing opted in', () => {
    assert.equal(cachePolicyOf(configSchema.parse({}), null, 'up/a'), undefined);
  });
});

describe('cacheModeOf', () => {
  it('reads Cache-Control and x-sluice-cache, the stronger winning', () => {
    assert.equal(cacheModeOf({}), 'use');
    assert.equal(cacheModeOf({ 'cache-control': 'max-age=0, No-Cache' }), 'refresh');
    assert.equal(cacheModeOf({ 'cache-control': 'no-store' }), 'bypass');
    assert.equal(cacheModeOf({ 'x-sluice-cache': 'refresh' }), 'refresh');
    assert.equal(cacheModeOf({ 'x-sluice-cache': 'refresh', 'cache-control': 'no-store' }), 'bypass');
  });

  it('refuses an x-sluice-cache it does not know, naming the header', () => {
    assert.throws(() => cacheModeOf({ 'x-sluice-cache': 'always' }), { status: 400, param: 'x-sluice-cache' });
  });
});

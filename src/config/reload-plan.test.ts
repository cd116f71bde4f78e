import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { changedKeys, planReload } from './reload-plan.ts';
import { configSchema } from './schema.ts';

const parse = (config: Record<string, unknown>) => configSchema.parse(config);

describe('planReload', () => {
  const running = parse({
    server: { port: 8080, body_limit_bytes: 1000 },
    routes: { smart: { targets: [{ model: 'mock/echo' }] } },
    store: { path: '/var/lib/sluice/a.db' },
    log: { level: 'info' },
  });

  it('applies what a running gateway rebuilds and keeps, naming each, what needs a restart', () => {
    const next = parse({
      server: { port: 9090, body_limit_bytes: 2000 },
      routes: { smart: { targets: [{ model: 'mock/slow' }] }, extra: { targets: [{ model: 'mock/echo' }] } },
      store: { path: '/var/lib/sluice/b.db' },
      log: { level: 'debug', format: 'json' },
    });
    const plan = planReload(running, next);
    assert.deepEqual(plan.changed.toSorted(), ['log.level', 'routes.extra', 'routes.smart.targets', 'server.body_limit_bytes']);
    assert.deepEqual(plan.restartRequired.toSorted(), ['log.format', 'server.port', 'store.path']);
    assert.equal(plan.config.server.port, 8080);
    assert.equal(plan.config.store.path, '/var/lib/sluice/a.db');
    assert.equal(plan.config.log.format, 'auto');
    assert.equal(plan.config.server.body_limit_bytes, 2000);
    assert.equal(plan.config.log.level, 'debug');
    assert.deepEqual(Object.keys(plan.config.routes), ['smart', 'extra']);
  });

  it('changes nothing and names nothing for the same file', () => {
    const plan = planReload(running, parse({ ...running }));
    assert.deepEqual(plan, { config: running, changed: [], restartRequired: [] });
  });

  it('keeps the keys the gateway fixes for its own reasons, an optional one absent as it was', () => {
    const next = parse({ ...running, tiers: { free: { requests_per_minute: 10 } }, default_tier: 'free' });
    const plan = planReload(running, next, [['tiers'], ['default_tier']]);
    assert.deepEqual(plan.restartRequired, ['tiers.free', 'default_tier']);
    assert.deepEqual(plan.config.tiers, {});
    assert.equal('default_tier' in plan.config, false);
  });

  it('never shares an object with the running config', () => {
    const plan = planReload(running, parse({}));
    assert.notEqual(plan.config.store, running.store);
  });
});

describe('changedKeys', () => {
  it('goes down objects, takes a list as one value and an absent key as undefined', () => {
    assert.deepEqual(changedKeys({ a: { b: 1, c: [1, 2] }, d: undefined }, { a: { b: 1, c: [1, 3] } }), [['a', 'c']]);
    assert.deepEqual(changedKeys({ a: 1 }, { a: 1, b: { c: 2 } }), [['b']]);
    assert.deepEqual(changedKeys({ a: 1 }, { a: 1 }), []);
  });
});

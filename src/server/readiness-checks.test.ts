import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configSchema } from '../config/schema.ts';
import { createReadiness } from './readiness.ts';
import { type ReadinessDeps, readinessChecks } from './readiness-checks.ts';

function deps(config: Record<string, unknown>, providers: string[], extra: Partial<ReadinessDeps> = {}): ReadinessDeps {
  return {
    config: configSchema.parse(config),
    registry: { providers: () => providers, keyPools: () => new Map() },
    database: () => undefined,
    pingRedis: undefined,
    mcp: () => ({}),
    ...extra,
  };
}

const reportOf = (d: ReadinessDeps) => createReadiness(readinessChecks(d))();

describe('readinessChecks', () => {
  it('does not count the built-in mock as a usable provider unless the config names it', async () => {
    const off = { ledger: { enabled: false } };
    const mockOnly = await reportOf(deps(off, ['mock']));
    assert.equal(mockOnly.ready, false);
    assert.deepEqual(mockOnly.checks.providers, {
      state: 'down',
      required: true,
      reason: 'no provider enabled (the mock counts only when providers names it)',
    });
    const named = await reportOf(deps({ ...off, providers: { mock: {} } }, ['mock']));
    assert.deepEqual(named.checks.providers, { state: 'ok', enabled: ['mock'] });
    const real = await reportOf(deps(off, ['mock', 'openai']));
    assert.deepEqual(real.checks.providers, { state: 'ok', enabled: ['openai'] });
  });

  it('reports the store as not open yet while start-up retries it, and off without a ledger', async () => {
    const waiting = await reportOf(deps({}, ['openai']));
    assert.deepEqual(waiting.checks.store, { state: 'down', required: true, reason: 'not open yet (retried in the background)' });
    const noLedger = await reportOf(deps({ ledger: { enabled: false } }, ['openai']));
    assert.deepEqual(noLedger.checks.store, { state: 'off' });
  });

  it('requires Redis only when a tier refuses without it (fail_closed)', async () => {
    const pingRedis = () => Promise.reject(new Error('Redis is unavailable: not connected'));
    const config = (policy: string) => ({ ledger: { enabled: false }, tiers: { t: { redis_unavailable: policy } } });
    const open = await reportOf(deps(config('fail_open'), ['openai'], { pingRedis }));
    assert.equal(open.ready, true);
    assert.deepEqual(open.checks.redis, { state: 'down', required: false, reason: 'unreachable' });
    const closed = await reportOf(deps(config('fail_closed'), ['openai'], { pingRedis }));
    assert.equal(closed.ready, false);
    assert.deepEqual(closed.checks.redis, { state: 'down', required: true, reason: 'unreachable' });
    const unused = await reportOf(deps(config('fail_closed'), ['openai']));
    assert.deepEqual(unused.checks.redis, { state: 'off' });
  });

  it('reports MCP servers that are not up by name, without making the gateway unready', async () => {
    const config = { ledger: { enabled: false }, mcp: { servers: { web: { url: 'http://127.0.0.1:1/mcp' }, files: { command: 'x' } } } };
    const up = { web: { state: 'up', tools: 2 }, files: { state: 'up', tools: 1 } };
    const allUp = await reportOf(deps(config, ['openai'], { mcp: () => up }));
    assert.deepEqual(allUp.checks.mcp, { state: 'ok', servers: up });
    const down = await reportOf(deps(config, ['openai'], { mcp: () => ({ ...up, files: { state: 'down', reason: 'exited', tools: 0 } }) }));
    assert.equal(down.ready, true);
    assert.deepEqual(down.checks.mcp, { state: 'down', required: false, reason: 'not up: files' });
    assert.deepEqual((await reportOf(deps({ ledger: { enabled: false } }, ['openai']))).checks.mcp, { state: 'off' });
  });
});

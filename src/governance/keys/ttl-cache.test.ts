import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TtlCache } from './ttl-cache.ts';

describe('TtlCache', () => {
  it('serves a loaded value (or its absence) until the TTL ends, then loads again', async () => {
    let now = 0;
    const loads: string[] = [];
    const cache = new TtlCache<number>({
      ttlMs: 100,
      now: () => now,
      load: async (k) => {
        loads.push(k);
        return k === 'a' ? 1 : undefined;
      },
    });
    assert.equal(cache.peek('a'), undefined);
    assert.equal(await cache.get('a'), 1);
    assert.equal(await cache.get('missing'), undefined);
    assert.deepEqual(cache.peek('a'), { value: 1, until: 100 });
    assert.ok(cache.peek('missing'));
    now = 100;
    assert.equal(cache.peek('a'), undefined);
    await cache.get('a');
    assert.deepEqual(loads, ['a', 'missing', 'a']);
  });

  it('deleteWhere forgets the values it picks and keeps the others', async () => {
    const cache = new TtlCache<string>({ ttlMs: 1_000, load: async (k) => (k === 'gone' ? undefined : `project-${k[0]}`) });
    for (const k of ['a1', 'a2', 'b1', 'gone']) await cache.get(k);
    cache.deleteWhere((_, value) => value === 'project-a');
    assert.equal(cache.peek('a1'), undefined);
    assert.equal(cache.peek('a2'), undefined);
    assert.deepEqual(cache.peek('b1')?.value, 'project-b');
    assert.ok(cache.peek('gone'), 'an absence is not a value of the project');
  });

  it('drops the oldest entry past maxEntries', async () => {
    const cache = new TtlCache<string>({ ttlMs: 1_000, maxEntries: 2, load: async (k) => k });
    await cache.get('a');
    await cache.get('b');
    await cache.get('c');
    assert.equal(cache.peek('a'), undefined);
    assert.ok(cache.peek('b'));
    assert.ok(cache.peek('c'));
  });

  it('a flood of unknown ids is bounded on its own and cannot push the values out', async () => {
    const loads: string[] = [];
    const cache = new TtlCache<string>({
      ttlMs: 1_000,
      maxEntries: 2,
      maxAbsent: 2,
      now: () => 0,
      load: async (k) => {
        loads.push(k);
        return k.startsWith('key') ? k : undefined;
      },
    });
    await cache.get('key-1');
    for (const id of ['x1', 'x2', 'x3', 'x4']) assert.equal(await cache.get(id), undefined);
    assert.deepEqual(cache.peek('key-1'), { value: 'key-1', until: 1_000 });
    // The absences keep to their own bound: the oldest is forgotten and loaded again.
    assert.equal(cache.peek('x1'), undefined);
    assert.ok(cache.peek('x4'));
    await cache.get('key-1');
    assert.deepEqual(loads, ['key-1', 'x1', 'x2', 'x3', 'x4']);
  });

  it('clear() forgets values and absences, and a load under way then stores nothing', async () => {
    let release = () => {};
    const cache = new TtlCache<string>({
      ttlMs: 1_000,
      now: () => 0,
      load: (k) => (k === 'slow' ? new Promise((resolve) => (release = () => resolve('stale'))) : Promise.resolve(k === 'a' ? 'A' : undefined)),
    });
    await cache.get('a');
    await cache.get('missing');
    const slow = cache.get('slow');
    cache.clear();
    release();
    assert.equal(await slow, 'stale');
    assert.equal(cache.peek('a'), undefined);
    assert.equal(cache.peek('missing'), undefined);
    assert.equal(cache.peek('slow'), undefined);
  });

  it('a load that was under way when the entry was deleted does not store its stale value', async () => {
    let release: (v: string) => void = () => {};
    const cache = new TtlCache<string>({ ttlMs: 1_000, load: () => new Promise((r) => (release = r)) });
    const pending = cache.get('k');
    cache.delete('k');
    release('before the revocation');
    assert.equal(await pending, 'before the revocation');
    assert.equal(cache.peek('k'), undefined);
  });

  it('a TTL of 0 caches nothing', async () => {
    let loads = 0;
    const cache = new TtlCache<number>({ ttlMs: 0, load: async () => ++loads });
    await cache.get('k');
    await cache.get('k');
    assert.equal(loads, 2);
  });

  it('revocation lags across instances (issue 25): refresh reads the store whatever is cached, and clear forgets everything', async () => {
    let stored = 1;
    let loads = 0;
    const cache = new TtlCache<number>({
      ttlMs: 60_000,
      load: async () => {
        loads++;
        return stored;
      },
    });
    assert.equal(await cache.get('k'), 1);
    stored = 2;
    assert.equal(await cache.get('k'), 1, 'cached');
    assert.equal(await cache.refresh('k'), 2);
    assert.equal(await cache.get('k'), 2, 'what refresh read is cached for the others');
    stored = 3;
    cache.clear();
    assert.equal(cache.peek('k'), undefined);
    assert.equal(await cache.get('k'), 3);
    assert.equal(loads, 3);
  });
});

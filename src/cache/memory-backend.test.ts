import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryBackend } from './memory-backend.ts';

describe('MemoryBackend', () => {
  it('evicts the least recently used once its bytes are over the bound', async () => {
    const cache = new MemoryBackend(10);
    await cache.set('a', 'aaaa', 1000);
    await cache.set('b', 'bbbb', 1000);
    assert.equal(await cache.get('a'), 'aaaa');
    await cache.set('c', 'cccc', 1000);
    assert.equal(await cache.get('b'), undefined);
    assert.equal(await cache.get('a'), 'aaaa');
    assert.equal(await cache.get('c'), 'cccc');
    assert.deepEqual(cache.stats, { bytes: 8, evictions: 1 });
  });

  it('forgets an answer at its TTL', async () => {
    let now = 0;
    const cache = new MemoryBackend(100, () => now);
    await cache.set('a', 'x', 50);
    assert.equal(await cache.has('a'), true);
    now = 50;
    assert.equal(await cache.has('a'), false);
    assert.equal(await cache.get('a'), undefined);
    assert.equal(cache.stats.bytes, 0);
  });

  it('does not keep an answer larger than the whole cache', async () => {
    const cache = new MemoryBackend(3);
    await cache.set('a', 'abc', 1000);
    await cache.set('b', 'abcd', 1000);
    assert.equal(await cache.get('a'), 'abc');
    assert.equal(await cache.get('b'), undefined);
  });

  it('counts a replaced answer once', async () => {
    const cache = new MemoryBackend(100);
    await cache.set('a', 'abc', 1000);
    await cache.set('a', 'abcdef', 1000);
    assert.deepEqual(cache.stats, { bytes: 6, evictions: 0 });
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient } from '@redis/client';
import { RedisSlots } from './concurrency-slots.ts';
import type { Redis } from '../../store/redis-link.ts';

const redisUrl = process.env.REDIS_URL;
const skip = redisUrl ? false : 'REDIS_URL not set: the Redis concurrency slots are skipped';

/** Two instances' slots on one Redis, each with its own clock (an instance that dies never releases). */
describe('Redis concurrency slots: a crashed instance does not hold its slots forever', { skip }, () => {
  let client: Redis;
  const prefix = `sluice-test-${process.pid}-${Date.now()}:`;
  let now = Date.now();
  const slots = () =>
    new RedisSlots(
      () => client,
      prefix,
      (_what, work) => void work(client),
      () => now,
    );
  const claims = [{ subject: 'key:k1', limit: 2 }];

  before(async () => {
    client = createClient({ url: redisUrl }) as Redis;
    await client.connect();
  });
  after(async () => {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(keys);
    client.destroy();
  });

  it('its slots lapse at their expiry; a released slot is free at once', async () => {
    // The instances' clock starts at the real time: Redis keeps each slot until its expiry on the
    // server's clock, and the file may have been loaded long before this test runs.
    now = Date.now();
    const crashed = slots();
    const other = slots();
    assert.deepEqual(await crashed.acquire(claims, 'req-a', 5_000), { ok: true, inUse: [1] });
    assert.deepEqual(await crashed.acquire(claims, 'req-b', 5_000), { ok: true, inUse: [2] });
    assert.equal((await other.acquire(claims, 'req-c', 5_000)).ok, false);
    now += 5_001;
    assert.deepEqual(await other.acquire(claims, 'req-c', 5_000), { ok: true, inUse: [1] });
    other.release(claims, 'req-c');
    assert.deepEqual(await other.acquire(claims, 'req-d', 5_000), { ok: true, inUse: [1] });
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { shardFiles } from './shard-files.ts';

describe('shardFiles', () => {
  const seconds: Record<string, number> = { 'a.test.ts': 90, 'b.test.ts': 50, 'c.test.ts': 40, 'd.test.ts': 10, 'e.test.ts': 60 };

  it('puts every file in exactly one shard, the costliest first into the cheapest shard', () => {
    const shards = shardFiles(Object.keys(seconds), 2, seconds);
    // a 90, e 60, b 50, c 40, d 10: a | e, b; then c to a's (90 < 110), d to e's (110 < 130).
    assert.deepEqual(shards, [
      ['a.test.ts', 'c.test.ts'],
      ['b.test.ts', 'd.test.ts', 'e.test.ts'],
    ]);
    assert.deepEqual(shards.flat().sort(), Object.keys(seconds).sort());
  });

  it('weighs a file not recorded yet as the median recorded file', () => {
    // new 50 (the median of 10, 50, 90): a | b, new; then d to a's.
    const shards = shardFiles(['a.test.ts', 'b.test.ts', 'd.test.ts', 'new.test.ts'], 2, {
      'a.test.ts': 90,
      'b.test.ts': 50,
      'd.test.ts': 10,
    });
    assert.deepEqual(shards, [
      ['a.test.ts', 'd.test.ts'],
      ['b.test.ts', 'new.test.ts'],
    ]);
  });

  it('weighs the loading of each file, so near-free files spread over the shards', () => {
    const free = Array.from({ length: 100 }, (_, i) => `f${i}.test.ts`);
    const times = { ...Object.fromEntries(free.map((f) => [f, 0])), 'a.test.ts': 4, 'b.test.ts': 4 };
    const shards = shardFiles([...free, 'a.test.ts', 'b.test.ts'], 3, times);
    // Counted as free, all 100 would go to the third shard. At 0.08 s each the third takes 52
    // (4.16 s) before a's and b's shards (4.08 s) are the cheapest, then they take turns: each
    // shard ends up at 5.36-5.44 s.
    const counts = shards.map((shard) => shard.filter((f) => f.startsWith('f')).length);
    assert.deepEqual(counts, [17, 16, 67]);
  });

  it('makes no empty shards when there are fewer files than shards', () => {
    assert.deepEqual(shardFiles(['a.test.ts'], 4, seconds), [['a.test.ts']]);
    assert.deepEqual(shardFiles([], 4, seconds), []);
  });
});

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

  it('makes no empty shards when there are fewer files than shards', () => {
    assert.deepEqual(shardFiles(['a.test.ts'], 4, seconds), [['a.test.ts']]);
    assert.deepEqual(shardFiles([], 4, seconds), []);
  });
});

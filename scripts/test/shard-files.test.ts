import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { shardFiles } from './shard-files.ts';

describe('shardFiles', () => {
  const sizes: Record<string, number> = { 'a.test.ts': 900, 'b.test.ts': 500, 'c.test.ts': 400, 'd.test.ts': 100, 'e.contract.test.ts': 60 };
  const sizeOf = (file: string) => sizes[file];

  it('puts every file in exactly one shard, the heaviest first into the lightest shard', () => {
    const shards = shardFiles(Object.keys(sizes), 2, sizeOf);
    // a 900, e 600 (a contract suite), b 500, c 400, d 100: a | e, b; then c to a's (900 < 1100), d to e's (1100 < 1300).
    assert.deepEqual(shards, [
      ['a.test.ts', 'c.test.ts'],
      ['b.test.ts', 'd.test.ts', 'e.contract.test.ts'],
    ]);
    assert.deepEqual(shards.flat().sort(), Object.keys(sizes).sort());
  });

  it('makes no empty shards when there are fewer files than shards', () => {
    assert.deepEqual(shardFiles(['a.test.ts'], 4, sizeOf), [['a.test.ts']]);
    assert.deepEqual(shardFiles([], 4, sizeOf), []);
  });
});

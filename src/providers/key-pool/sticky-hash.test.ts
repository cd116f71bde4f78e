import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rendezvous } from './sticky-hash.ts';

const items = [
  { id: 'a', weight: 1 },
  { id: 'b', weight: 1 },
  { id: 'c', weight: 2 },
];
const pick = (list: typeof items, affinity: string) =>
  rendezvous(
    list,
    affinity,
    (i) => i.id,
    (i) => i.weight,
  ).id;

describe('rendezvous', () => {
  it('gives an affinity the same item every time', () => {
    for (let n = 0; n < 20; n++) assert.equal(pick(items, `user-${n}`), pick(items, `user-${n}`));
  });

  it('moves only the affinities of an item that leaves', () => {
    const without = items.filter((i) => i.id !== 'a');
    for (let n = 0; n < 200; n++) {
      const before = pick(items, `user-${n}`);
      if (before !== 'a') assert.equal(pick(without, `user-${n}`), before);
    }
  });

  it('spreads affinities by weight', () => {
    const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
    for (let n = 0; n < 4000; n++) counts[pick(items, `session-${n}`)]++;
    // c has half the weight: about 2000 of 4000; a and b about 1000 each.
    assert.ok(counts.c > 1750 && counts.c < 2250, JSON.stringify(counts));
    assert.ok(counts.a > 800 && counts.b > 800, JSON.stringify(counts));
  });
});

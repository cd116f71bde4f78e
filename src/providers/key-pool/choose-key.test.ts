import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseKey, type KeyState, usableAt } from './choose-key.ts';

const NOW = 1_000_000;

function key(label: string, more: Partial<KeyState> = {}): KeyState {
  return {
    label,
    weight: 1,
    window: { start: NOW, requests: 0, tokens: 0 },
    learned: {},
    coolingUntil: 0,
    removed: null,
    ...more,
  };
}

const labelOf = (choice: ReturnType<typeof chooseKey>) => choice.key?.label;

describe('usableAt', () => {
  it('is now for a fresh key and Infinity for one taken out', () => {
    assert.ok(usableAt(key('a'), NOW) <= NOW);
    assert.equal(usableAt(key('a', { removed: { status: 401, message: 'bad key' } }), NOW), Infinity);
  });

  it("waits out a cooldown, a full configured minute and a learned limit's reset", () => {
    assert.equal(usableAt(key('a', { coolingUntil: NOW + 5000 }), NOW), NOW + 5000);
    assert.equal(usableAt(key('a', { rpm: 2, window: { start: NOW - 1000, requests: 2, tokens: 0 } }), NOW), NOW + 59_000);
    assert.equal(usableAt(key('a', { tpm: 100, window: { start: NOW, requests: 1, tokens: 120 } }), NOW), NOW + 60_000);
    assert.equal(usableAt(key('a', { learned: { tokens: { remaining: 0, resetAt: NOW + 700 } } }), NOW), NOW + 700);
    // A learned limit with some left, or whose reset has passed, holds nothing back.
    assert.ok(usableAt(key('a', { learned: { requests: { remaining: 3, resetAt: NOW + 700 } } }), NOW) <= NOW);
    assert.ok(usableAt(key('a', { learned: { requests: { remaining: 0, resetAt: NOW - 1 } } }), NOW) <= NOW);
  });

  it('starts counting again in a new minute', () => {
    assert.ok(usableAt(key('a', { rpm: 1, window: { start: NOW - 60_000, requests: 1, tokens: 0 } }), NOW) <= NOW);
  });
});

describe('chooseKey', () => {
  it('draws by weight', () => {
    const keys = [key('a', { weight: 3 }), key('b', { weight: 1 })];
    assert.equal(labelOf(chooseKey(keys, { now: NOW, random: () => 0.7 })), 'a');
    assert.equal(labelOf(chooseKey(keys, { now: NOW, random: () => 0.8 })), 'b');
  });

  it('skips keys cooling down, taken out or already tried', () => {
    const keys = [key('a', { coolingUntil: NOW + 1 }), key('b', { removed: { status: 403, message: '' } }), key('c'), key('d')];
    assert.equal(labelOf(chooseKey(keys, { now: NOW, exclude: new Set(['d']), random: () => 0 })), 'c');
  });

  it('says when the soonest key is free, or that every key is out', () => {
    const cooling = [key('a', { coolingUntil: NOW + 3000 }), key('b', { coolingUntil: NOW + 1000 })];
    assert.deepEqual(chooseKey(cooling, { now: NOW }), { key: null, removed: false, until: NOW + 1000 });
    const out = [key('a', { removed: { status: 401, message: '' } })];
    assert.deepEqual(chooseKey(out, { now: NOW }), { key: null, removed: true });
  });

  it('keeps an affinity on its key while that key is usable', () => {
    const keys = [key('a'), key('b'), key('c')];
    const first = labelOf(chooseKey(keys, { now: NOW, affinity: 'conversation-1' }));
    for (let n = 0; n < 5; n++) assert.equal(labelOf(chooseKey(keys, { now: NOW, affinity: 'conversation-1' })), first);
    const without = keys.map((k) => (k.label === first ? { ...k, coolingUntil: NOW + 10 } : k));
    assert.notEqual(labelOf(chooseKey(without, { now: NOW, affinity: 'conversation-1' })), first);
  });
});

import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { watchHeapGrowth } from './heap-growth.ts';

describe('watchHeapGrowth', () => {
  it('grows the heap in small steps above the threshold and gives the choice back to V8 below the lower one', async () => {
    let inFlight = 0;
    const set: string[] = [];
    const stop = watchHeapGrowth(() => inFlight, {
      tightAbove: 100,
      looseBelow: 50,
      everyMs: 2,
      setFlags: (flags) => set.push(flags),
    });
    // Several reads of the count (a busy machine may delay them: waits for a change up to 5 s).
    const settle = () => sleep(20);
    const changed = async (length: number) => {
      for (let waited = 0; set.length < length && waited < 5_000; waited += 10) await sleep(10);
    };
    await settle();
    assert.deepEqual(set, [], 'few requests: V8 chooses');
    inFlight = 150;
    await changed(1);
    assert.deepEqual(set, ['--heap-growing-percent=25']);
    // Between the two thresholds nothing changes either way: no flapping.
    inFlight = 80;
    await settle();
    assert.deepEqual(set, ['--heap-growing-percent=25']);
    inFlight = 10;
    await changed(2);
    assert.deepEqual(set, ['--heap-growing-percent=25', '--heap-growing-percent=0']);
    inFlight = 150;
    await changed(3);
    stop();
    assert.deepEqual(set.slice(2), ['--heap-growing-percent=25', '--heap-growing-percent=0'], 'stopping gives the choice back');
  });
});
